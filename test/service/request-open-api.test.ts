import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSupervisor } from '../../kernel/supervisor.js';
import { HOUR, operatorRequest, serveInProcess } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { http } from './serve-child.js';

const post = (api: { url: string }, task: string, body: unknown) =>
  http(api, 'POST', `/tasks/${task}/requests`, { body });

describe('POST /tasks/:id/requests', { timeout: 60_000 }, () => {
  it('opens an operator DecisionRequest 201, a retry 200, and answers each refusal with its status, writing nothing', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    const api = await serveInProcess(sup);
    try {
      await sup.createTask({ ...SPEC, taskId: 'po-a' });
      await sup.createTask({ ...SPEC, taskId: 'po-c' });
      await sup.send('po-c', { type: 'task.cancel', reason: 'done' });
      const asked = operatorRequest('ship', HOUR);

      const opened = await post(api, 'po-a', asked);
      assert.equal(opened.status, 201, opened.text);
      assert.deepEqual(
        [opened.body.taskId, opened.body.requestId, opened.body.admitted, opened.body.written, opened.body.error],
        ['po-a', 'ship', true, true, undefined],
      );
      const revision = sup.getTask('po-a')!.revision;
      assert.equal(opened.body.revision, revision);
      assert.equal(sup.getTask('po-a')!.context.requests['ship']?.status, 'pending');

      const again = await post(api, 'po-a', asked);
      assert.deepEqual(
        [again.status, again.body.duplicate, again.body.written, again.body.revision],
        [200, true, false, revision],
      );

      const cases: Array<[string, unknown, number, string, string]> = [
        ['po-a', { ...asked, participant: 'someone-else' }, 409, 'request_exists', 'participant'],
        ['po-z', asked, 404, 'task_not_found', 'taskId'],
        ['po-c', asked, 409, 'invalid_transition', 'requestId'],
        ['po-a', { ...operatorRequest('typo'), revokedWehn: [] }, 400, 'invalid_request', 'revokedWehn'],
        [
          'po-a',
          { ...operatorRequest('alt'), alternatives: [{ id: 'ship', summary: 's', extra: 1 }] },
          400,
          'invalid_request',
          'alternatives.0.extra',
        ],
        ['po-a', { ...operatorRequest('ttl'), ttlMs: -1 }, 400, 'invalid_request', 'ttlMs'],
      ];
      for (const [task, body, status, code, path] of cases) {
        const res = await post(api, task, body);
        assert.deepEqual([res.status, res.body.error?.code, res.body.error?.path], [status, code, path], res.text);
      }
      const notJson = await http(api, 'POST', '/tasks/po-a/requests', {
        body: '{"requestId":',
        headers: { 'content-type': 'application/json' },
      });
      assert.deepEqual([notJson.status, notJson.body.error.code], [400, 'invalid_json']);
      assert.equal((await http(api, 'PUT', '/tasks/po-a/requests')).status, 405);
      assert.equal(sup.getTask('po-a')!.revision, revision, 'nothing written by the retry or any refusal');
      assert.deepEqual(Object.keys(sup.getTask('po-a')!.context.requests), ['ship']);
    } finally {
      await api.close();
      await sup.stop();
    }
  });
});
