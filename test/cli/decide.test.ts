import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock, type ManualClock } from '../../kernel/clock.js';
import { createSupervisor, type Supervisor } from '../../kernel/supervisor.js';
import {
  HOUR,
  decideCli,
  operatorRequest,
  ordivon,
  requestEvents,
  serveInProcess,
} from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

/**
 * Task `dec-a` with requests `ok` (three days), `late` (one hour) and `wrong` (no deadline);
 * Task `dec-b` with `rev`, revoked by a new Assignment. The clock starts at `startMs`.
 */
async function prepare(startMs: number): Promise<{ state: string; sup: Supervisor; clock: ManualClock }> {
  const state = tempDir();
  const clock = manualClock(startMs);
  const sup = createSupervisor({ state, clock });
  await sup.start();
  await sup.createTask({ ...SPEC, taskId: 'dec-a' });
  await sup.createTask({ ...SPEC, taskId: 'dec-b' });
  for (const [id, ttl] of [
    ['ok', 72 * HOUR],
    ['late', HOUR],
    ['wrong', null],
  ] as const)
    assert.equal(await sup.openRequest('dec-a', operatorRequest(id, ttl)), true);
  await sup.openRequest('dec-b', operatorRequest('rev'));
  await sup.send('dec-b', { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
  return { state, sup, clock };
}

type Answer = Awaited<ReturnType<typeof decideCli>>;
function refused(r: Answer, code: string, path: string, detail?: RegExp) {
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stdout, '', 'a refusal prints nothing on stdout');
  assert.deepEqual([r.error?.code, r.error?.path], [code, path]);
  if (detail) assert.match(r.error!.message, detail);
}

/** The refusals every route must give: unknown, not allowed, revoked, then an answer and a second one. */
async function everyRefusal(state: string) {
  refused(
    await decideCli(state, 'dec-a', 'nope', '--answer', 'ship'),
    'decision_unknown',
    'requestId',
    /no request nope/,
  );
  refused(await decideCli(state, 'dec-a', 'wrong', '--answer', 'deploy'), 'answer_not_allowed', 'answer');
  refused(
    await decideCli(state, 'dec-b', 'rev', '--answer', 'ship'),
    'decision_revoked',
    'requestId',
    /revoked at r\d+ by assignment\.commit \(generation 1\)/,
  );
  refused(await decideCli(state, 'dec-z', 'ok', '--answer', 'ship'), 'task_not_found', 'taskId');
  const first = await decideCli(
    state,
    'dec-a',
    'ok',
    '--answer',
    'hold',
    '--by',
    'alice',
    '--note',
    'after the migration',
  );
  assert.equal(first.status, 0, first.stderr);
  assert.deepEqual([first.answer?.admitted, first.answer?.error, first.stderr], [true, undefined, '']);
  const second = await decideCli(state, 'dec-a', 'ok', '--answer', 'ship', '--by', 'bob');
  refused(second, 'decision_not_pending', 'requestId', /already answered hold/);
  const usage = await ordivon('decide', 'dec-a', 'ok', '--state', state);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /usage: --answer/);
}

describe('ordivon decide', { timeout: 120_000 }, () => {
  it('against a state root: every refusal code with exit 1, an answer by name, a second answer naming the first, and show lists them', async () => {
    // Opened two hours ago by this clock: `late` is past its deadline by the real one the CLI uses.
    const { state, sup } = await prepare(Date.now() - 2 * HOUR);
    await sup.stop();
    await everyRefusal(state);
    refused(await decideCli(state, 'dec-a', 'late', '--answer', 'ship'), 'decision_expired', 'requestId');
    const shown = await ordivon('show', 'dec-a', '--state', state, '--json');
    const requests = JSON.parse(shown.stdout).requests as Array<Record<string, any>>;
    assert.deepEqual(
      requests.map((r) => [r.requestId, r.status, r.answered?.answer ?? null, r.answered?.answeredBy ?? null]),
      [
        ['ok', 'answered', 'hold', 'alice'],
        ['late', 'expired', null, null],
        ['wrong', 'pending', null, null],
      ],
    );
    assert.deepEqual(
      requests[0]!.refusals.map((r: Record<string, string>) => [r.answer, r.answeredBy, r.code]),
      [['ship', 'bob', 'decision_not_pending']],
    );
    const text = (await ordivon('show', 'dec-a', '--state', state)).stdout;
    assert.match(text, /request ok {2}operator {2}answered {2}for release-manager {2}expires /);
    assert.match(text, /pending action: ship release 4.2 to the staging fleet/);
    assert.match(text, /alternatives: ship \(ship it now\), hold \(hold until the migration lands\); takes ship, hold/);
    assert.match(text, /answered hold by alice at r\d+ .* \(after the migration\)/);
    assert.match(text, /refused r\d+ ship by bob: decision_not_pending/);
    assert.match(text, /refused r\d+ ship by external: decision_expired/);
    // The revoked request's refusal names the Assignment that revoked it, in both forms.
    const b = JSON.parse((await ordivon('show', 'dec-b', '--state', state, '--json')).stdout);
    const revoked = (b.rejections as Array<Record<string, any>>).find((r) => r.code === 'decision_revoked')!;
    assert.deepEqual(revoked.causes, [
      { kind: 'revoked', requestId: 'rev', event: 'assignment.commit', revision: 3, generation: 1 },
    ]);
    assert.match(
      (await ordivon('show', 'dec-b', '--state', state)).stdout,
      /rejected r\d+ request\.answer: decision_revoked[^\n]*\n {4}request rev revoked at r3 by assignment\.commit \(generation 1\)/,
    );
  });

  it('through a running service: the same codes and exits, and an answer racing the deadline is decision_expired before its timer fired', async () => {
    const { state, sup, clock } = await prepare(Date.now());
    const service = await serveInProcess(sup);
    try {
      await everyRefusal(state);
      clock.advance(HOUR, { fire: false });
      refused(await decideCli(state, 'dec-a', 'late', '--answer', 'ship'), 'decision_expired', 'requestId');
      // The answer marked it expired; the timer, firing now, writes nothing more.
      clock.advance(0);
      await sup.taskActor('dec-a')!.settled();
      assert.deepEqual(
        requestEvents(sup, 'dec-a')
          .filter((e) => e.requestId === 'late')
          .map((e) => [e.type, e.code]),
        [
          ['request.open', null],
          ['request.answer', 'decision_expired'],
        ],
      );
    } finally {
      await service.close();
      await sup.stop();
    }
  });
});
