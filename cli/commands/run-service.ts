import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Supervisor } from '../../kernel/index.js';

/** Longest unix socket path this uses: Linux takes 107 bytes, macOS 103. */
const MAX_SOCKET_PATH = 100;

/**
 * Where `ordivon run` serves its control API: `<state>/service.sock`, or, when that path is too
 * long for a unix socket, a name in the temp directory derived from the state root.
 * `service.json` names it either way, and that is where the CLI looks.
 */
export function runSocketPath(root: string): string {
  const inRoot = join(root, 'service.sock');
  if (Buffer.byteLength(inRoot) <= MAX_SOCKET_PATH) return inRoot;
  return join(tmpdir(), `ordivon-${createHash('sha256').update(root).digest('hex').slice(0, 16)}.sock`);
}

/**
 * Serves the control API of a running `ordivon run` on a 0600 unix socket (no token: only the
 * state root's owner can connect) and records it in `service.json`, so `task create`, `send`,
 * `decide`, `request open`, `show` and `list` from another shell go through it instead of
 * answering `state_locked`. Resolves with
 * the function that stops serving and removes `service.json`. A socket it cannot listen on is
 * said on stderr and the run goes on without the API.
 */
export async function serveRun(supervisor: Supervisor, say: (line: string) => void): Promise<() => Promise<void>> {
  const { startService } = await import('../service/start-service.js');
  const path = runSocketPath(supervisor.root);
  try {
    const service = await startService({ supervisor, listener: { kind: 'socket', path }, drainGraceMs: 2_000 });
    say(`ordivon run: control API on ${path}`);
    return () => service.close();
  } catch (error) {
    say(
      `ordivon run: control API not served (${(error as Error).message}); commands on this state root wait for the run`,
    );
    return async () => {};
  }
}
