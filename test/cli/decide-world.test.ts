import assert from 'node:assert/strict';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { DECISION_HARNESSES, decisionSpec, decisionWorld } from '../support/decision-task.js';
import { decideCli, operatorRequest, serveInProcess } from '../support/decision-requests.js';
import { tempDir } from '../support/temp.js';
import { http } from '../service/serve-child.js';

describe('decision_stale through the CLI and the control API', { timeout: 120_000 }, () => {
  it('answers to requests bound to a trusted source that moved are decision_stale: by the CLI on the state root, by the CLI through the service, by the API', async () => {
    const state = tempDir();
    const dirs = decisionWorld();
    let host = await openHost({ state, harnesses: DECISION_HARNESSES });
    const { taskId } = await host.supervisor.createTask(decisionSpec(dirs));
    await host.supervisor.send(taskId, { type: 'assignment.commit', harness: 'surveyor', stage: 'survey' });
    await host.supervisor.waitFor(taskId, ['waiting']);
    for (const id of ['by-cli', 'by-service', 'by-api'])
      assert.equal(await host.supervisor.openRequest(taskId, operatorRequest(id)), true);
    await host.stop();
    renameSync(join(dirs.world, 'POLICY.md'), join(dirs.world, 'POLICY.moved.md'));

    const local = await decideCli(state, taskId, 'by-cli', '--answer', 'ship');
    assert.equal(local.status, 1, local.stderr);
    assert.deepEqual([local.error?.code, local.error?.written], ['decision_stale', true]);
    assert.match(local.error!.message, /policy/);

    host = await openHost({ state, harnesses: DECISION_HARNESSES });
    const service = await serveInProcess(host.supervisor);
    try {
      const viaService = await decideCli(state, taskId, 'by-service', '--answer', 'ship');
      assert.equal(viaService.status, 1, viaService.stderr);
      assert.equal(viaService.error?.code, 'decision_stale');
      const api = await http(service, 'POST', `/tasks/${taskId}/requests/by-api/answer`, { body: { answer: 'ship' } });
      assert.equal(api.status, 409);
      assert.deepEqual([api.body.error.code, api.body.error.path], ['decision_stale', 'requestId']);
      const listed = await http(service, 'GET', `/tasks/${taskId}/requests`);
      assert.deepEqual(
        listed.body.requests.map((r: Record<string, any>) => [r.requestId, r.status, r.refusals[0]?.code]),
        [
          ['by-cli', 'revoked', 'decision_stale'],
          ['by-service', 'revoked', 'decision_stale'],
          ['by-api', 'revoked', 'decision_stale'],
        ],
      );
    } finally {
      await service.close();
      await host.stop();
    }
  });
});
