import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock, type ManualClock } from '../../kernel/clock.js';
import { HostError } from '../../kernel/errors.js';
import { createSupervisor, type Supervisor } from '../../kernel/supervisor.js';
import { HOUR, operatorRequest, requestEvents } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

async function started(state = tempDir(), clock = manualClock()) {
  const sup = createSupervisor({ state, clock });
  await sup.start();
  return { sup, clock, state };
}

/** Runs `fn` on a fresh Task of a started supervisor with a manual clock, then stops it. */
async function withTask(fn: (sup: Supervisor, taskId: string, clock: ManualClock) => Promise<void>): Promise<void> {
  const { sup, clock } = await started();
  try {
    await fn(sup, (await sup.createTask(SPEC)).taskId, clock);
  } finally {
    await sup.stop();
  }
}

const answer = (requestId: string, value: string, by = 'ops') => ({
  type: 'request.answer' as const,
  requestId,
  answer: value,
  answeredBy: by,
});

describe('DecisionRequests through the library: deadlines, refusals, restarts', () => {
  it('an answer at the deadline is decision_expired before the expire timer fired; the timer then writes nothing', () =>
    withTask(async (sup, taskId, clock) => {
      assert.equal(await sup.openRequest(taskId, operatorRequest('race', HOUR)), true);
      // Time reaches the deadline, the timer not fired yet: the kernel's clock decides.
      clock.advance(HOUR, { fire: false });
      const refused = await sup.send(taskId, answer('race', 'ship'));
      assert.deepEqual([refused.written, refused.admitted, refused.code], [true, false, 'decision_expired']);
      assert.match(refused.detail!, /expired at 2026-01-01T01:00:00.000Z, answered at 2026-01-01T01:00:00.000Z/);
      assert.equal(sup.getTask(taskId)!.context.requests['race']!.status, 'expired');
      clock.advance(0);
      await sup.taskActor(taskId)!.settled();
      assert.deepEqual(requestEvents(sup, taskId), [
        { type: 'request.open', origin: 'host', code: null, requestId: 'race' },
        { type: 'request.answer', origin: 'external', code: 'decision_expired', requestId: 'race' },
      ]);
    }));

  it('the deadline timer sends request.expire when the clock reaches it; a later answer is decision_expired', () =>
    withTask(async (sup, taskId, clock) => {
      await sup.openRequest(taskId, operatorRequest('timed', HOUR));
      clock.advance(HOUR - 1);
      await sup.taskActor(taskId)!.settled();
      assert.equal(sup.getTask(taskId)!.context.requests['timed']!.status, 'pending');
      clock.advance(1);
      await sup.taskActor(taskId)!.settled();
      assert.equal(sup.getTask(taskId)!.context.requests['timed']!.status, 'expired');
      assert.equal(clock.timers, 0);
      assert.equal((await sup.send(taskId, answer('timed', 'ship'))).code, 'decision_expired');
      assert.deepEqual(
        requestEvents(sup, taskId).map((e) => [e.type, e.origin, e.code]),
        [
          ['request.open', 'host', null],
          ['request.expire', 'host', null],
          ['request.answer', 'external', 'decision_expired'],
        ],
      );
    }));

  it('after a restart on the same state root the request is still pending and answered once; a deadline passed while down expires at boot', async () => {
    const state = tempDir();
    const clock = manualClock();
    let taskId: string;
    {
      const { sup } = await started(state, clock);
      taskId = (await sup.createTask(SPEC)).taskId;
      await sup.openRequest(taskId, operatorRequest('long', 2 * HOUR));
      await sup.openRequest(taskId, operatorRequest('short', HOUR / 2));
      await sup.stop();
    }
    assert.equal(clock.timers, 0, 'a stopped Host leaves no timer armed');
    clock.advance(HOUR);
    const { sup } = await started(state, clock);
    try {
      // Expired during boot, before anything was served.
      const requests = sup.getTask(taskId)!.context.requests;
      assert.deepEqual([requests['short']!.status, requests['long']!.status], ['expired', 'pending']);
      const first = await sup.send(taskId, answer('long', 'hold', 'alice'));
      assert.deepEqual([first.admitted, first.code], [true, undefined]);
      const second = await sup.send(taskId, answer('long', 'ship', 'bob'));
      assert.deepEqual(
        [second.written, second.code, second.detail],
        [true, 'decision_not_pending', 'already answered hold'],
      );
      assert.equal(sup.getTask(taskId)!.context.requests['long']!.answer, 'hold');
      assert.deepEqual(
        requestEvents(sup, taskId).map((e) => [e.type, e.origin, e.requestId, e.code]),
        [
          ['request.open', 'host', 'long', null],
          ['request.open', 'host', 'short', null],
          ['request.expire', 'host', 'short', null],
          ['request.answer', 'external', 'long', null],
          ['request.answer', 'external', 'long', 'decision_not_pending'],
        ],
      );
    } finally {
      await sup.stop();
    }
  });

  it('refuses an unknown request, an answer it does not take, and any answer after a new Assignment revoked it, naming that Assignment', () =>
    withTask(async (sup, taskId) => {
      await sup.openRequest(taskId, operatorRequest('q1'));
      const unknown = await sup.send(taskId, answer('q9', 'ship'));
      assert.deepEqual([unknown.code, unknown.detail], ['decision_unknown', `no request q9 on this Task`]);
      const wrong = await sup.send(taskId, answer('q1', 'rewrite'));
      assert.deepEqual([wrong.code, wrong.detail], ['answer_not_allowed', 'rewrite is not an answer request q1 takes']);
      assert.equal(sup.getTask(taskId)!.context.requests['q1']!.status, 'pending');
      const assigned = await sup.send(taskId, { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
      assert.equal(assigned.admitted, true);
      assert.equal(sup.getTask(taskId)!.context.requests['q1']!.status, 'revoked');
      const late = await sup.send(taskId, answer('q1', 'ship'));
      assert.deepEqual(
        [late.written, late.code, late.detail],
        [true, 'decision_revoked', `revoked at r${assigned.revision} by assignment.commit (generation 1)`],
      );
    }));

  it('request.open is the Host’s: refused from send, and openRequest refuses a malformed request writing nothing', () =>
    withTask(async (sup, taskId) => {
      const revision = sup.getTask(taskId)!.revision;
      const outside = await sup.sendRaw(taskId, {
        type: 'request.open',
        requestId: 'x',
        requestDigest: `sha256:${'a'.repeat(64)}`,
        generation: 0,
        about: 'operator',
        contextDigest: null,
        expiresAt: null,
      });
      assert.deepEqual([outside.written, outside.code], [false, 'not_allowed']);
      const bad = { ...operatorRequest('bad'), allowed: ['ship', 'deploy'] };
      await assert.rejects(
        sup.openRequest(taskId, bad),
        (e: unknown) => e instanceof HostError && e.code === 'invalid_request' && e.path === 'allowed',
      );
      await assert.rejects(
        sup.openRequest('no-such-task', operatorRequest('q')),
        (e: unknown) => e instanceof HostError && e.code === 'task_not_found',
      );
      assert.equal(sup.getTask(taskId)!.revision, revision);
    }));
});
