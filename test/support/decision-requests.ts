import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { OperatorRequestInput } from '../../kernel/requests/operator-requests.js';
import type { Supervisor } from '../../kernel/supervisor.js';
import { startService, type RunningService } from '../../cli/service/start-service.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));

/** An operator question with two answers (`ship`, `hold`); `ttlMs` null: no deadline. */
export function operatorRequest(requestId: string, ttlMs: number | null = null): OperatorRequestInput {
  return {
    requestId,
    pendingAction: 'ship release 4.2 to the staging fleet',
    participant: 'release-manager',
    alternatives: [
      { id: 'ship', summary: 'ship it now' },
      { id: 'hold', summary: 'hold until the migration lands' },
    ],
    evidence: ['the staging smoke test passed'],
    unresolvedClaims: ['the migration is reversible'],
    consequence: 'staging serves 4.2',
    reversibility: 'reversible',
    authority: 'release management',
    budgetImpact: 'none',
    revokedWhen: ['a new Assignment'],
    costOfDelay: 'staging stays on 4.1',
    allowed: ['ship', 'hold'],
    ttlMs,
  };
}

/** The request events and answers of a Task's journal: type, origin, refusal code and request id. */
export function requestEvents(sup: Supervisor, taskId: string) {
  return sup
    .events(taskId)
    .filter((e) => e.type.startsWith('request.'))
    .map((e) => ({
      type: e.type,
      origin: e.origin,
      code: e.disposition.admitted ? null : e.disposition.code,
      requestId: e.data['requestId'],
    }));
}

export const HOUR = 3_600_000;

/** Serves the control API of a started supervisor on 127.0.0.1 (an ephemeral port), writing its service.json. */
export function serveInProcess(sup: Supervisor): Promise<RunningService> {
  return startService({ supervisor: sup, listener: { kind: 'tcp', host: '127.0.0.1', port: 0 } });
}

/** Runs the built CLI in a child process without blocking this one (an in-process service must answer it). */
export function ordivon(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], (error, stdout, stderr) => {
      // A non-zero exit is an answer here, not a failure: its code is the status.
      const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ status, stdout, stderr });
    });
  });
}

/**
 * `ordivon decide … --json`: the exit code, the answer it printed on stdout when admitted, and the
 * error object it printed on stderr when not (the refusal's code, path, Task state and `written`).
 */
export async function decideCli(state: string, taskId: string, requestId: string, ...flags: string[]) {
  const r = await ordivon('decide', taskId, requestId, '--state', state, '--json', ...flags);
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    answer: (r.stdout ? JSON.parse(r.stdout) : undefined) as Record<string, any> | undefined,
    error: (r.stdout ? undefined : JSON.parse(r.stderr).error) as Record<string, any> | undefined,
  };
}
