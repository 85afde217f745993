import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createSupervisor, type Supervisor } from '../../kernel/supervisor.js';
import { HOUR, decideCli, operatorRequest, ordivon, serveInProcess } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

/** The `--json` error document a command printed: stderr's last line (docs/cli.md). */
const errorOf = (stderr: string) => JSON.parse(stderr.trim().split('\n').at(-1)!).error as Record<string, any>;

/**
 * `ordivon request open … --json` in a child process: the exit code, the answer it printed on
 * stdout when opened, and the error document on stderr when not (stdout then empty).
 */
async function openCli(state: string, taskId: string, request: unknown) {
  const r = await ordivon('request', 'open', taskId, JSON.stringify(request), '--state', state, '--json');
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    answer: (r.stdout ? JSON.parse(r.stdout) : undefined) as Record<string, any> | undefined,
    error: r.stdout ? undefined : errorOf(r.stderr),
  };
}

/** Tasks `ro-a` (open) and `ro-c` (cancelled) on a fresh state root, by a supervisor left running. */
async function prepare(): Promise<{ state: string; sup: Supervisor }> {
  const state = tempDir();
  const sup = createSupervisor({ state });
  await sup.start();
  await sup.createTask({ ...SPEC, taskId: 'ro-a' });
  await sup.createTask({ ...SPEC, taskId: 'ro-c' });
  await sup.send('ro-c', { type: 'task.cancel', reason: 'done with it' });
  return { state, sup };
}

/** What every route must give: opened, the same again (nothing written), another question, the refusals; then it is answered. */
async function everyAnswer(state: string, revisionOf: () => Promise<number>) {
  const asked = operatorRequest('ship-4.2', 2 * HOUR);
  const opened = await openCli(state, 'ro-a', asked);
  assert.equal(opened.status, 0, opened.stderr);
  assert.deepEqual(
    [opened.answer?.taskId, opened.answer?.requestId, opened.answer?.admitted, opened.answer?.written, opened.stderr],
    ['ro-a', 'ship-4.2', true, true, ''],
  );
  const at = opened.answer!.revision as number;
  assert.equal(await revisionOf(), at);

  const again = await openCli(state, 'ro-a', { ...asked, ttlMs: null });
  assert.equal(again.status, 0, again.stderr);
  assert.deepEqual([again.answer?.written, again.answer?.duplicate, again.answer?.revision], [false, true, at]);

  const refusals: Array<[string, unknown, number, string, string]> = [
    ['ro-a', { ...asked, consequence: 'production serves 4.2' }, 1, 'request_exists', 'consequence'],
    ['ro-z', asked, 1, 'task_not_found', 'taskId'],
    ['ro-c', operatorRequest('late-question'), 1, 'invalid_transition', 'requestId'],
  ];
  for (const [task, request, status, code, path] of refusals) {
    const r = await openCli(state, task, request);
    assert.equal(r.status, status, `${code}: ${r.stderr}`);
    assert.deepEqual([r.stdout, r.error?.code, r.error?.path, r.error?.written], ['', code, path, false]);
  }
  for (const [request, code, path] of [
    [{ ...operatorRequest('typo'), consequense: 'x' }, 'invalid_request', 'consequense'],
    [{ ...operatorRequest('bad'), allowed: ['ship', 'deploy'] }, 'invalid_request', 'allowed'],
  ] as const) {
    const r = await openCli(state, 'ro-a', request);
    assert.equal(r.status, 2, r.stderr);
    assert.deepEqual([r.stdout, r.error?.code, r.error?.path], ['', code, path]);
  }
  const notJson = await ordivon('request', 'open', 'ro-a', '{"requestId":', '--state', state, '--json');
  assert.equal(notJson.status, 2);
  assert.equal(errorOf(notJson.stderr).code, 'invalid_json');
  assert.equal(await revisionOf(), at, 'nothing written by the retry or any refusal');

  const shown = await ordivon('show', 'ro-a', '--state', state, '--json');
  const [request] = JSON.parse(shown.stdout).requests;
  assert.deepEqual(
    [request.requestId, request.about, request.status, request.participant, request.openedAt, request.consequence],
    ['ship-4.2', 'operator', 'pending', 'release-manager', at, 'staging serves 4.2'],
  );
  assert.equal(typeof request.expiresAt, 'string', 'ttlMs set a deadline');
  const answered = await decideCli(state, 'ro-a', 'ship-4.2', '--answer', 'ship', '--by', 'alice');
  assert.deepEqual([answered.status, answered.answer?.admitted], [0, true]);
}

describe('ordivon request open', { timeout: 120_000 }, () => {
  it('against a state root: opens an operator request, takes the same question again as a retry, and refuses the rest with exit 1 or 2, writing nothing', async () => {
    const { state, sup } = await prepare();
    await sup.stop();
    const revision = async () => {
      const r = await ordivon('show', 'ro-a', '--state', state, '--json');
      return JSON.parse(r.stdout).revision as number;
    };
    await everyAnswer(state, revision);

    const text = await ordivon('request', 'open', 'ro-a', JSON.stringify(operatorRequest('second')), '--state', state);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^opened second at revision \d+; task is \S+\n$/);

    const missing = join(tempDir(), 'no-root');
    const r = await ordivon(
      'request',
      'open',
      'ro-a',
      JSON.stringify(operatorRequest('q')),
      '--state',
      missing,
      '--json',
    );
    assert.equal(r.status, 1);
    assert.equal(errorOf(r.stderr).code, 'state_missing');
    assert.equal(existsSync(missing), false, 'no state root created');
    const bad = await ordivon('request', 'open', 'ro-a', '{}', '--state', missing, '--json');
    assert.equal(bad.status, 2);
    assert.equal(existsSync(missing), false, 'bad input touches no state root');
  });

  it('through a running service: the same answers, by the control API', async () => {
    const { state, sup } = await prepare();
    const service = await serveInProcess(sup);
    try {
      await everyAnswer(state, async () => sup.getTask('ro-a')!.revision);
    } finally {
      await service.close();
      await sup.stop();
    }
  });
});
