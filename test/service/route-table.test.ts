import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSupervisor } from '../../kernel/supervisor.js';
import { NO_STATE } from '../../kernel/send-result.js';
import { serveInProcess } from '../support/decision-requests.js';
import { SPEC, driveToRunning } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { http } from './serve-child.js';

const commit = { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' } as const;

describe('the control API route table (real HTTP on loopback)', { timeout: 60_000 }, () => {
  it('answers an unknown route 404, a wrong method 405 with Allow, a bad parameter, query or body 400 at its field; nothing written', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    const api = await serveInProcess(sup);
    try {
      await sup.createTask({ ...SPEC, taskId: 'rt-1' });
      await sup.send('rt-1', commit);
      const before = JSON.stringify(sup.events('rt-1'));

      const cases: Array<[string, string, unknown, number, string, string | undefined, string | undefined]> = [
        // method, path, body, status, code, path of the refusal, Allow
        ['GET', '/nowhere', undefined, 404, 'route_not_found', undefined, undefined],
        ['GET', '/tasks/rt-1/nowhere', undefined, 404, 'route_not_found', undefined, undefined],
        ['DELETE', '/tasks/rt-1', undefined, 405, 'method_not_allowed', undefined, 'GET'],
        ['PUT', '/tasks/rt-1/events', commit, 405, 'method_not_allowed', undefined, 'GET, POST'],
        ['GET', '/tasks/rt-1/requests/r/answer', undefined, 405, 'method_not_allowed', undefined, 'POST'],
        ['POST', '/health', undefined, 405, 'method_not_allowed', undefined, 'GET'],
        ['GET', '/tasks/bad%20id', undefined, 400, 'invalid_request', 'id', undefined],
        ['GET', '/tasks/%E0%A4%A/events', undefined, 400, 'invalid_request', 'id', undefined],
        ['GET', '/tasks/rt-1?events=maybe', undefined, 400, 'invalid_request', 'events', undefined],
        ['POST', '/tasks/rt-1/requests/r/answer', { answer: 'yes', by: 'x' }, 400, 'invalid_request', 'by', undefined],
        ['POST', '/tasks/rt-1/requests/r/answer', { answer: '' }, 400, 'invalid_request', 'answer', undefined],
        [
          'POST',
          '/tasks/rt-1/requests/r/answer',
          { answer: 'yes', note: 7 },
          400,
          'invalid_request',
          'note',
          undefined,
        ],
        ['POST', '/tasks/rt-1/events', { type: 'task.cancel', reasn: 'x' }, 400, 'invalid_event', 'reasn', undefined],
      ];
      for (const [method, path, body, status, code, field, allow] of cases) {
        const r = await http(api, method, path, body === undefined ? {} : { body });
        const label = `${method} ${path}`;
        assert.equal(r.status, status, `${label}: ${r.text}`);
        const got = r.body.error ?? r.body;
        assert.deepEqual([got.code, got.path], [code, field], label);
        assert.equal(r.headers['allow'], allow, label);
      }
      assert.equal(JSON.stringify(sup.events('rt-1')), before, 'nothing written by any refusal');
    } finally {
      await api.close();
      await sup.stop();
    }
  });

  it('needs the token before it says whether a route exists; the probes need none', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    const api = await serveInProcess(sup);
    try {
      for (const [method, path] of [
        ['GET', '/nowhere'],
        ['DELETE', '/tasks'],
      ] as const) {
        const r = await http(api, method, path, { token: false });
        assert.deepEqual([r.status, r.body.error.code], [401, 'unauthorized'], `${method} ${path}`);
      }
      const probe = await http(api, 'POST', '/ready', { token: false });
      assert.deepEqual(
        [probe.status, probe.body.error.code, probe.headers['allow']],
        [405, 'method_not_allowed', 'GET'],
      );
    } finally {
      await api.close();
      await sup.stop();
    }
  });

  it('answers each POST /tasks/:id/events with its kind and the status of it', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    const api = await serveInProcess(sup);
    try {
      await sup.createTask({ ...SPEC, taskId: 'rt-2' });
      const send = (body: unknown, task = 'rt-2') => http(api, 'POST', `/tasks/${task}/events`, { body });
      const admitted = await send({ ...commit, eventId: 'c1' });
      const duplicate = await send({ ...commit, eventId: 'c1' });
      const refused = await send({ type: 'completion.propose', generation: 1 });
      const missing = await send(commit, 'rt-none');
      const malformedMissing = await send({ type: 'no.such.event' }, 'rt-none');
      const answers = [admitted, duplicate, refused, missing, malformedMissing].map((r) => [
        r.status,
        r.body.taskId,
        r.body.kind,
        r.body.written,
        r.body.code,
      ]);
      assert.deepEqual(answers, [
        [200, 'rt-2', 'admitted', true, undefined],
        [200, 'rt-2', 'duplicate', false, undefined],
        [409, 'rt-2', 'refused', false, 'invalid_transition'],
        // An unknown Task is answered first, before its event is parsed, with the one NO_STATE.
        [404, 'rt-none', 'refused', false, 'task_not_found'],
        [404, 'rt-none', 'refused', false, 'task_not_found'],
      ]);
      assert.deepEqual([missing.body.revision, missing.body.state], [0, NO_STATE]);

      await sup.createTask({ ...SPEC, taskId: 'rt-3' });
      await driveToRunning(sup, 'rt-3', 1);
      await sup.send('rt-3', { type: 'assignment.commit', harness: 'hermes', purpose: 'repair' });
      const retained = await send({ type: 'completion.propose', generation: 1, summary: 'stale' }, 'rt-3');
      assert.deepEqual(
        [retained.status, retained.body.kind, retained.body.written, retained.body.code],
        [200, 'retained', true, 'stale_assignment'],
      );
    } finally {
      await api.close();
      await sup.stop();
    }
  });
});
