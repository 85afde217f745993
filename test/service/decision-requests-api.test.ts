import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock, type ManualClock } from '../../kernel/clock.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { HOUR, operatorRequest, requestEvents, serveInProcess } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { http } from './serve-child.js';

/** A supervisor with a manual clock on `state`, its control API on loopback; `fn` gets both. */
async function serving(
  state: string,
  clock: ManualClock,
  fn: (api: { url: string }, sup: ReturnType<typeof createSupervisor>) => Promise<void>,
) {
  const sup = createSupervisor({ state, clock });
  await sup.start();
  const service = await serveInProcess(sup);
  try {
    await fn(service, sup);
  } finally {
    await service.close();
    await sup.stop();
  }
}

const post = (api: { url: string }, task: string, request: string, body: unknown) =>
  http(api, 'POST', `/tasks/${task}/requests/${request}/answer`, { body });

describe('DecisionRequests through the control API', { timeout: 60_000 }, () => {
  it('answers every refusal code as {error:{code,message,path}} with its status, an answer racing the deadline included', async () => {
    const clock = manualClock();
    await serving(tempDir(), clock, async (api, sup) => {
      await sup.createTask({ ...SPEC, taskId: 'api-a' });
      await sup.createTask({ ...SPEC, taskId: 'api-b' });
      await sup.openRequest('api-a', operatorRequest('ok'));
      await sup.openRequest('api-a', operatorRequest('race', HOUR));
      await sup.openRequest('api-b', operatorRequest('rev'));
      await sup.send('api-b', { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });

      const listed = await http(api, 'GET', '/tasks/api-a/requests');
      assert.equal(listed.status, 200);
      const race = listed.body.requests[1];
      assert.deepEqual(
        [race.requestId, race.status, race.about, race.participant, race.expiresAt, race.allowed],
        ['race', 'pending', 'operator', 'release-manager', '2026-01-01T01:00:00.000Z', ['ship', 'hold']],
      );
      assert.equal(race.reversibility, 'reversible');

      const cases: Array<[string, string, unknown, number, string, string, RegExp]> = [
        ['api-a', 'nope', { answer: 'ship' }, 404, 'decision_unknown', 'requestId', /no request nope/],
        ['api-a', 'ok', { answer: 'deploy' }, 409, 'answer_not_allowed', 'answer', /deploy is not an answer/],
        ['api-b', 'rev', { answer: 'ship' }, 409, 'decision_revoked', 'requestId', /./],
        ['api-z', 'ok', { answer: 'ship' }, 404, 'task_not_found', 'taskId', /no task api-z/],
      ];
      for (const [task, request, body, status, code, path, message] of cases) {
        const res = await post(api, task, request, body);
        assert.deepEqual([res.status, res.body.error.code, res.body.error.path], [status, code, path], code);
        assert.match(res.body.error.message, message);
      }
      clock.advance(HOUR, { fire: false });
      const late = await post(api, 'api-a', 'race', { answer: 'ship' });
      assert.deepEqual([late.status, late.body.error.code, late.body.written], [409, 'decision_expired', true]);
      clock.advance(0);
      await sup.taskActor('api-a')!.settled();
      assert.equal(requestEvents(sup, 'api-a').filter((e) => e.type === 'request.expire').length, 0);

      const first = await post(api, 'api-a', 'ok', { answer: 'hold', answeredBy: 'alice', note: 'wait' });
      assert.deepEqual([first.status, first.body.admitted, first.body.error], [200, true, undefined]);
      const second = await post(api, 'api-a', 'ok', { answer: 'ship', answeredBy: 'bob' });
      assert.deepEqual([second.status, second.body.error.code], [409, 'decision_not_pending']);
      assert.equal(second.body.error.message, 'already answered hold');
      const after = (await http(api, 'GET', '/tasks/api-a/requests')).body.requests[0];
      assert.deepEqual(
        [after.status, after.answered.answer, after.answered.answeredBy, after.answered.note],
        ['answered', 'hold', 'alice', 'wait'],
      );
      assert.deepEqual(
        after.refusals.map((r: Record<string, string>) => [r.answer, r.code]),
        [
          ['deploy', 'answer_not_allowed'],
          ['ship', 'decision_not_pending'],
        ],
      );
    });
  });

  it('refuses a malformed answer 400 invalid_request naming the field, writing nothing', async () => {
    await serving(tempDir(), manualClock(), async (api, sup) => {
      await sup.createTask({ ...SPEC, taskId: 'api-c' });
      await sup.openRequest('api-c', operatorRequest('ok'));
      const revision = sup.getTask('api-c')!.revision;
      for (const [body, path] of [
        [{}, 'answer'],
        [{ answer: 'ship', by: 'x' }, 'by'],
        [{ answer: '' }, 'answer'],
        [{ answer: 'ship', note: 'n'.repeat(2_001) }, 'note'],
      ] as const) {
        const res = await post(api, 'api-c', 'ok', body);
        assert.deepEqual([res.status, res.body.error.code, res.body.error.path], [400, 'invalid_request', path]);
      }
      assert.equal((await http(api, 'GET', '/tasks/api-c/requests/ok/answer')).status, 405);
      assert.equal(sup.getTask('api-c')!.revision, revision);
    });
  });

  it('after a restart on the same state root: a deadline passed while down is expired at boot, the pending one is answered once', async () => {
    const state = tempDir();
    const clock = manualClock();
    await serving(state, clock, async (_api, sup) => {
      await sup.createTask({ ...SPEC, taskId: 'api-r' });
      await sup.openRequest('api-r', operatorRequest('short', HOUR));
      await sup.openRequest('api-r', operatorRequest('long', 4 * HOUR));
    });
    clock.advance(2 * HOUR);
    await serving(state, clock, async (api) => {
      const listed = (await http(api, 'GET', '/tasks/api-r/requests')).body.requests;
      assert.deepEqual(
        listed.map((r: Record<string, string>) => [r.requestId, r.status]),
        [
          ['short', 'expired'],
          ['long', 'pending'],
        ],
      );
      assert.equal((await post(api, 'api-r', 'short', { answer: 'ship' })).body.error.code, 'decision_expired');
      assert.equal((await post(api, 'api-r', 'long', { answer: 'ship' })).status, 200);
      assert.equal((await post(api, 'api-r', 'long', { answer: 'ship' })).body.error.code, 'decision_not_pending');
    });
  });
});
