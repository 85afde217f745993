import assert from 'node:assert/strict';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { sha256 } from '../../store/index.js';
import { DECISION_HARNESSES, POLICY_1, decisionSpec, decisionWorld } from '../support/decision-task.js';
import { operatorRequest, requestEvents } from '../support/decision-requests.js';
import { tempDir } from '../support/temp.js';

describe('a DecisionRequest bound to a world revision', () => {
  it('an answer after a trusted source it is bound to moved is decision_stale naming the source, and the request is revoked', async () => {
    const dirs = decisionWorld();
    const host = await openHost({ state: tempDir(), harnesses: DECISION_HARNESSES });
    const sup = host.supervisor;
    try {
      const { taskId } = await sup.createTask(decisionSpec(dirs));
      await sup.send(taskId, { type: 'assignment.commit', harness: 'surveyor', stage: 'survey' });
      await sup.waitFor(taskId, ['waiting']);
      const bound = sup.getTask(taskId)!.context.contextDigest;
      assert.ok(bound);
      assert.equal(await sup.openRequest(taskId, operatorRequest('upgrade-now')), true);
      const held = sup.getTask(taskId)!.context.requests['upgrade-now']!;
      assert.equal(held.contextDigest, bound);
      const body = sup.getObject<{ worldRevision: Array<{ sourceId: string; digest: string }> }>(held.digest).body;
      assert.deepEqual(
        body.worldRevision.find((s) => s.sourceId === 'policy'),
        { sourceId: 'policy', digest: sha256(POLICY_1) },
      );
      // The policy the request was bound to is moved away: the world it was asked about is gone.
      renameSync(join(dirs.world, 'POLICY.md'), join(dirs.world, 'POLICY.old.md'));
      const stale = await sup.send(taskId, {
        type: 'request.answer',
        requestId: 'upgrade-now',
        answer: 'ship',
        answeredBy: 'alice',
      });
      assert.deepEqual([stale.written, stale.admitted, stale.code], [true, false, 'decision_stale']);
      assert.match(stale.detail!, /policy/);
      assert.equal(sup.getTask(taskId)!.context.requests['upgrade-now']!.status, 'revoked');
      // Putting the file back does not revive it: the request was consumed by the stale answer.
      renameSync(join(dirs.world, 'POLICY.old.md'), join(dirs.world, 'POLICY.md'));
      const again = await sup.send(taskId, { type: 'request.answer', requestId: 'upgrade-now', answer: 'ship' });
      assert.equal(again.code, 'decision_revoked');
      // The refusal names what revoked it: the stale answer, its revision and the source that moved.
      assert.equal(
        again.detail,
        `revoked at r${stale.revision} by an answer refused decision_stale ` +
          `(policy bound ${sha256(POLICY_1).slice(0, 19)}, now gone; tools (depends on policy))`,
      );
      assert.deepEqual(
        requestEvents(sup, taskId).map((e) => e.code),
        [null, 'decision_stale', 'decision_revoked'],
      );
    } finally {
      await host.stop();
    }
  });
});
