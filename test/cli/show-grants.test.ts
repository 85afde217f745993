import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { ordivon, serveInProcess } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { permissionAgent } from '../support/permission-agent.js';
import { http } from '../service/serve-child.js';

// Real parts throughout: the Host runs a scripted ACP agent (a child process) that asks to edit a
// file outside its workspace; the control API is served on loopback; `ordivon show` is a child.

describe('grants in show and in the control API’s Task view', { timeout: 120_000 }, () => {
  it('lists the answered permission request as a grant for the next Context, then under the Context that recorded it', async () => {
    const state = tempDir();
    const taskId = 't-grants';
    const host = await openHost({ state, harnesses: { agent: permissionAgent(join(tempDir(), 'trace.jsonl')) } });
    const sup = host.supervisor;
    const service = await serveInProcess(sup);
    let grant: Record<string, string>;
    try {
      await sup.createTask({ ...SPEC, taskId });
      await sup.send(taskId, { type: 'assignment.commit', harness: 'agent', stage: 'work' });
      assert.equal(await sup.waitFor(taskId, ['waiting']), 'waiting');
      const [request] = (await http(service, 'GET', `/tasks/${taskId}/requests`)).body.requests;
      assert.equal(request.about, 'permission');
      const pending = (await http(service, 'GET', `/tasks/${taskId}`)).body;
      assert.deepEqual(pending.grants, [], 'a pending request is no grant');

      const answered = await sup.send(taskId, {
        type: 'request.answer',
        requestId: request.requestId,
        answer: 'allow',
      });
      assert.equal(answered.admitted, true, JSON.stringify(answered));
      grant = {
        requestId: request.requestId,
        key: request.permission.key,
        action: request.pendingAction,
        by: 'operator',
        answer: 'allow',
      };
      const before = (await http(service, 'GET', `/tasks/${taskId}`)).body;
      assert.deepEqual(before.grants, [grant]);
      assert.deepEqual(
        before.contexts.map((c: { grants: unknown }) => c.grants),
        [[]],
        'the Context compiled before the answer records none',
      );

      await sup.send(taskId, { type: 'assignment.commit', harness: 'agent', stage: 'work' });
      assert.equal(await sup.waitFor(taskId, ['waiting']), 'waiting');
      const after = (await http(service, 'GET', `/tasks/${taskId}`)).body;
      assert.deepEqual(
        after.contexts.map((c: { grants: unknown }) => c.grants),
        [[], [grant]],
      );
      assert.deepEqual(after.grants, [grant], 'a grant holds for every later Context');
    } finally {
      await service.close();
      await host.stop();
    }

    const json = await ordivon('show', taskId, '--state', state, '--json');
    assert.equal(json.status, 0, json.stderr);
    const view = JSON.parse(json.stdout);
    assert.deepEqual(view.grants, [grant]);
    assert.deepEqual(
      view.contexts.map((c: { grants: unknown }) => c.grants),
      [[], [grant]],
    );

    const text = await ordivon('show', taskId, '--state', state);
    assert.equal(text.status, 0, text.stderr);
    const lines = text.stdout.split('\n');
    const line = `    grant allow ${grant.key} by operator: ${grant.action} (${grant.requestId})`;
    const g2 = lines.findIndex((l) => /^ {2}context r\d+ g2 /.test(l));
    const next = lines.indexOf('  grants for the next Context:');
    assert.ok(g2 > 0 && next > g2, text.stdout);
    assert.equal(lines.slice(g2, next).filter((l) => l === line).length, 1, 'under the Context of generation 2');
    assert.equal(lines.slice(0, g2).includes(line), false, 'not under generation 1');
    assert.equal(lines[next + 1], line);
  });
});
