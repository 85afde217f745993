import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { taskProvenance } from '../../views/task-contexts.js';
import { LatestRejection } from '../../views/task-runs.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { EventStore, sha256 } from '../../store/index.js';
import { DECISION_HARNESSES, POLICY_1, decisionSpec, decisionWorld } from '../support/decision-task.js';
import { tempDir } from '../support/temp.js';

/** The Task's Contexts and refusals as `ordivon show` derives them, from the durable state after the Host stopped. */
function provenance(state: string, taskId: string) {
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  try {
    const events = [...store.stream(taskId)].map(({ revision, event }) => ({ revision, ...event }));
    const context = (store.projection(taskId)!.snapshot as { context: Record<string, unknown> }).context;
    const derived = taskProvenance(
      { events, object: (digest) => store.getObject(digest).body },
      LatestRejection.parse(context['lastRejection']),
    );
    return { ...derived, events };
  } finally {
    void store.close();
  }
}

/** A Host with the decision harnesses and a Task whose survey stage has delivered (generation 1). */
async function surveyed() {
  const state = tempDir();
  const host = await openHost({ state, harnesses: DECISION_HARNESSES });
  const { taskId } = await host.supervisor.createTask(decisionSpec(decisionWorld()));
  await host.supervisor.send(taskId, { type: 'assignment.commit', harness: 'surveyor', stage: 'survey' });
  await host.supervisor.waitFor(taskId, ['waiting']);
  return { host, sup: host.supervisor, taskId, state };
}

const settled = ['completed', 'waiting'];

describe('refusals with the sources that caused them, over a real store', { timeout: 120_000 }, () => {
  it('untrusted_authority names the candidate and its untrusted support; context_mismatch and superseded name the Context against the current one', async () => {
    const { host, sup, taskId, state } = await surveyed();
    const foreign = `sha256:${'a'.repeat(64)}`;
    try {
      await sup.send(taskId, { type: 'assignment.commit', harness: 'pick-strip-checks', stage: 'choose' });
      assert.equal(await sup.waitFor(taskId, settled), 'waiting');
      const left = sup.getTask(taskId)!.context.contextDigest!;
      await sup.send(taskId, { type: 'decision.submit', contextDigest: foreign, candidateId: 'upgrade' });
      await sup.send(taskId, { type: 'assignment.commit', harness: 'pick-upgrade', stage: 'choose' });
      const late = await sup.send(taskId, { type: 'decision.submit', contextDigest: left, candidateId: 'upgrade' });
      assert.equal(late.code, 'superseded');
      assert.equal(await sup.waitFor(taskId, settled), 'completed');
    } finally {
      await host.stop();
    }
    const { contexts, rejections } = provenance(state, taskId);
    assert.deepEqual(
      contexts.map((c) => [c.generation, c.stage, c.format, c.goalRevision, c.candidates.length]),
      [
        [1, 'survey', 'read-set', 1, 0],
        [2, 'choose', 'read-set', 1, 3],
        [3, 'choose', 'read-set', 1, 3],
      ],
    );
    const choose = contexts[1]!;
    const item = (id: string) => choose.items.find((i) => i.sourceId === id)!;
    assert.deepEqual(item('policy'), {
      sourceId: 'policy',
      digest: sha256(POLICY_1),
      trust: 'trusted',
      claim: 'asserted',
      selectedBy: item('policy').selectedBy,
      dependsOn: [],
      location: { in: 'world', path: 'POLICY.md' },
    });
    assert.deepEqual([item('tools').trust, item('tools').dependsOn], ['trusted', ['policy']]);
    assert.deepEqual(
      [item('notes').trust, item('notes').claim, item('notes').location],
      ['untrusted', 'unverified', { in: 'workspace', path: 'NOTES.md' }],
    );
    assert.deepEqual(
      choose.candidates.map((k) => [k.id, k.authority, k.supportedBy.map((s) => `${s.sourceId}:${s.trust}`)]),
      [
        ['upgrade', 'trusted', ['policy:trusted', 'tools:trusted']],
        ['strip-checks', 'untrusted', ['notes:untrusted']],
        ['broken-tool', 'trusted', ['policy:trusted']],
      ],
    );
    // The late decision may arrive before or after the rerun's Context is compiled: the kernel's
    // detail says which was current, and the cause names the same one.
    const superseded = rejections.at(-1)!;
    const current = /the current one is (sha256:[0-9a-f]{12}|none)/.exec(superseded.detail ?? '')![1]!;
    const rerun = contexts[2]!.contextDigest;
    assert.equal(current, current === 'none' ? 'none' : rerun.slice(0, 19));
    assert.deepEqual(
      rejections.map((r) => [r.event, r.reason, r.causes]),
      [
        [
          'decision.submit',
          'untrusted_authority',
          [{ kind: 'support', candidateId: 'strip-checks', sourceId: 'notes', trust: 'untrusted' }],
        ],
        [
          'decision.submit',
          'context_mismatch',
          [{ kind: 'context', named: foreign, current: choose.contextDigest, decidedAt: null }],
        ],
        [
          'decision.submit',
          'superseded',
          [
            {
              kind: 'context',
              named: choose.contextDigest,
              current: current === 'none' ? null : rerun,
              decidedAt: null,
            },
          ],
        ],
      ],
    );
  });

  it('candidate_unknown names the Context’s candidates, action_failed its job and exit code, and a second decision on a decided Context names the first', async () => {
    const { host, sup, taskId, state } = await surveyed();
    try {
      for (const harness of ['pick-invented', 'pick-broken-tool']) {
        await sup.send(taskId, { type: 'assignment.commit', harness, stage: 'choose' });
        assert.equal(await sup.waitFor(taskId, settled), 'waiting', harness);
      }
      const current = sup.getTask(taskId)!.context.contextDigest!;
      const again = await sup.send(taskId, { type: 'decision.submit', contextDigest: current, candidateId: 'upgrade' });
      assert.equal(again.code, 'superseded');
    } finally {
      await host.stop();
    }
    const { contexts, rejections, events } = provenance(state, taskId);
    const decided = events.find((e) => e.type === 'decision.submit' && e.disposition.admitted)!;
    const action = events.find((e) => e.type === 'action.record')!;
    assert.deepEqual(
      rejections.map((r) => [r.reason, r.causes]),
      [
        [
          'candidate_unknown',
          [{ kind: 'candidate', candidateId: 'rewrite-everything', known: ['upgrade', 'strip-checks', 'broken-tool'] }],
        ],
        ['action_failed', [{ kind: 'action', candidateId: 'broken-tool', jobId: action.data['jobId'], exitCode: 3 }]],
        [
          'superseded',
          [
            {
              kind: 'context',
              named: contexts[2]!.contextDigest,
              current: contexts[2]!.contextDigest,
              decidedAt: decided.revision,
            },
          ],
        ],
      ],
    );
    assert.equal(typeof action.data['jobId'], 'string');
  });

  it('context_stale after goal.revise names the Goal with its bound and current revision, and what depends on it', async () => {
    const { host, sup, taskId, state } = await surveyed();
    try {
      let revised = false;
      const stop = sup.subscribe((c) => {
        if (c.taskId !== taskId || c.type !== 'context.compile' || revised) return;
        revised = true;
        void sup.send(taskId, { type: 'goal.revise', goal: 'Move to record format 2 only.' });
      });
      await sup.send(taskId, { type: 'assignment.commit', harness: 'pick-upgrade', stage: 'choose' });
      assert.equal(await sup.waitFor(taskId, settled), 'completed');
      stop();
    } finally {
      await host.stop();
    }
    const { contexts, rejections } = provenance(state, taskId);
    const bound = contexts[1]!;
    const assignment = bound.items.find((i) => i.sourceId === 'assignment')!;
    assert.deepEqual(
      rejections.map((r) => [r.event, r.reason, r.causes]),
      [
        [
          'run.observe',
          'context_stale',
          [
            { kind: 'stale', sourceId: 'goal', bound: 'revision 1', current: 'revision 2' },
            {
              kind: 'stale',
              sourceId: 'assignment',
              bound: assignment.digest,
              current: assignment.digest,
              via: 'goal',
            },
          ],
        ],
      ],
    );
    assert.deepEqual(
      contexts.map((c) => [c.generation, c.goalRevision]),
      [
        [1, 1],
        [2, 1],
        [3, 2],
      ],
      'the rerun is bound to the revised Goal',
    );
  });
});
