import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSupervisor } from '../../kernel/supervisor.js';
import { CliError } from '../../cli/cli-io.js';
import { withSupervisor } from '../../cli/commands/write.js';
import { decideCli, operatorRequest, ordivon } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

/** Task `locked` with the operator requests `by-decide` and `by-send`, on a state root no process holds. */
async function prepare(): Promise<string> {
  const state = tempDir();
  const sup = createSupervisor({ state });
  await sup.start();
  try {
    await sup.createTask({ ...SPEC, taskId: 'locked' });
    for (const id of ['by-decide', 'by-send']) assert.equal(await sup.openRequest('locked', operatorRequest(id)), true);
  } finally {
    await sup.stop();
  }
  return state;
}

/** A CLI answer's code (null: admitted), whichever stream and JSON shape carry it. */
function codeOf(r: { stdout: string; stderr: string }): string | null {
  const json = JSON.parse(r.stdout.trim() || r.stderr.trim()) as Record<string, any>;
  if (json.error) return json.error.code;
  return json.admitted ? null : json.code;
}

describe('writing commands wait briefly for the state-root lock', { timeout: 120_000 }, () => {
  it('two ordivon decide started at once on one state root, no service: one admitted, one decision_not_pending', async () => {
    const state = await prepare();
    const answers = await Promise.all(
      ['ship', 'hold'].map((answer) => decideCli(state, 'locked', 'by-decide', '--answer', answer)),
    );
    const outcomes = answers.map((a) => [a.status, a.error?.code ?? null]).sort();
    assert.deepEqual(outcomes, [
      [0, null],
      [1, 'decision_not_pending'],
    ]);
  });

  it('two ordivon send of a request.answer started at once: one admitted, one decision_not_pending', async () => {
    const state = await prepare();
    const results = await Promise.all(
      ['ship', 'hold'].map((answer) =>
        ordivon(
          'send',
          'locked',
          JSON.stringify({ type: 'request.answer', requestId: 'by-send', answer }),
          '--state',
          state,
          '--json',
        ),
      ),
    );
    const outcomes = results.map((r) => [r.status, codeOf(r)]).sort();
    assert.deepEqual(outcomes, [
      [0, null],
      [1, 'decision_not_pending'],
    ]);
  });

  it('past its deadline the wait ends state_locked, naming the holder', async () => {
    const state = await prepare();
    const holder = createSupervisor({ state, purpose: 'the holder' });
    await holder.start();
    try {
      await assert.rejects(
        withSupervisor(state, async () => 'not reached', { lockWaitMs: 0 }),
        (e) => e instanceof CliError && e.code === 'state_locked' && /the holder/.test(e.message),
      );
    } finally {
      await holder.stop();
    }
  });
});
