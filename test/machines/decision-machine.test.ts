import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { stateName, taskFrontier, taskMachine, type TaskEvent } from '../../machines/index.js';
import { D, observedAssignment } from '../support/machine-events.js';

type Snap = SnapshotFrom<typeof taskMachine>;

/** Takes each event with pure transitions; a `false` expectation means the state must not take it. */
function take(snap: Snap, event: Record<string, unknown>, revision: number): Snap {
  const full = { origin: 'host', revision, ...event } as TaskEvent;
  assert.ok(snap.can(full), `${stateName(snap.value)} should take ${full.type}`);
  return transition(taskMachine, snap, full)[0];
}

/** A Task whose decision stage's run was observed (generation 1, Context `c`): `evaluating`. */
function evaluating(): Snap {
  let snap = initialTransition(taskMachine)[0];
  const events = [
    { type: 'task.created', taskId: 't1', attempt: 1, specDigest: D('a'), requiredArtifacts: ['choice.json'] },
    ...observedAssignment(1, D('c')),
  ];
  events.forEach((e, i) => (snap = take(snap, e, i + 1)));
  assert.equal(stateName(snap.value), 'evaluating');
  return snap;
}

const decision = (over: Record<string, unknown> = {}) => ({
  type: 'decision.submit',
  contextDigest: D('c'),
  candidateId: 'upgrade',
  decisionDigest: D('d'),
  generation: 1,
  known: true,
  authority: 'trusted',
  ...over,
});

describe('decisions in the Task statechart', () => {
  it('admits a trusted candidate on the current, fresh Context: the Host acts, then evaluates again', () => {
    let snap = take(evaluating(), decision(), 7);
    assert.equal(stateName(snap.value), 'acting');
    assert.equal(taskFrontier(snap.value), 'act');
    assert.deepEqual(snap.context.decision, {
      generation: 1,
      contextDigest: D('c'),
      candidateId: 'upgrade',
      digest: D('d'),
    });
    // A second decision on the same Context is retained, superseded, while the Host acts.
    snap = take(snap, decision({ origin: 'external', candidateId: 'other' }), 8);
    assert.deepEqual([stateName(snap.value), snap.context.lastRejection?.reason], ['acting', 'superseded']);
    assert.match(snap.context.lastRejection!.detail!, /already decided \(upgrade\)/);
    snap = take(
      snap,
      { type: 'action.record', generation: 1, candidateId: 'upgrade', jobId: 'job-2', exitCode: 0, ok: true },
      9,
    );
    assert.equal(stateName(snap.value), 'evaluating');
    assert.deepEqual(snap.context.action, { generation: 1, candidateId: 'upgrade', ok: true });
  });

  it('orders its refusals: unknown Context, left Context, unknown candidate, moved read set, untrusted authority', () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ known: false, generation: 0, authority: null, origin: 'external' }, 'context_mismatch', 'evaluating'],
      [{ known: false, generation: 0, authority: null }, 'context_mismatch', 'waiting'],
      [{ contextDigest: D('b'), origin: 'external' }, 'superseded', 'evaluating'],
      [{ contextDigest: D('b') }, 'superseded', 'waiting'],
      [
        { authority: null, stale: [{ sourceId: 'goal', bound: 'revision 1', current: 'revision 2' }] },
        'candidate_unknown',
        'waiting',
      ],
      [
        { authority: 'untrusted', stale: [{ sourceId: 'goal', bound: 'revision 1', current: 'revision 2' }] },
        'context_stale',
        'stale',
      ],
      [{ authority: 'untrusted' }, 'untrusted_authority', 'waiting'],
    ];
    for (const [over, code, state] of cases) {
      const snap = take(evaluating(), decision(over), 7);
      assert.deepEqual(
        [snap.context.lastRejection?.reason, stateName(snap.value)],
        [code, state],
        JSON.stringify(over),
      );
      assert.equal(snap.context.decision, null);
    }
  });

  it('a stale result goes to `stale`, whose frontier reruns the stage under the next generation', () => {
    let snap = initialTransition(taskMachine)[0];
    const events = [
      { type: 'task.created', taskId: 't1', attempt: 1, specDigest: D('a'), requiredArtifacts: ['x'] },
      { type: 'assignment.commit', generation: 1, harness: 'codex', purpose: 'work', assignmentDigest: D('1') },
      { type: 'context.compile', generation: 1, contextDigest: D('c') },
      { type: 'dispatch.intend', generation: 1, clientRequestId: 'r1' },
      { type: 'dispatch.ack', clientRequestId: 'r1', jobId: 'job-1' },
      {
        type: 'run.observe',
        generation: 1,
        clientRequestId: 'r1',
        contextDigest: D('c'),
        receiptDigest: D('r'),
        jobStatus: 'succeeded',
        evidence: { x: D('e') },
        stale: [{ sourceId: 'spec', bound: D('s'), current: null }],
      },
    ];
    events.forEach((e, i) => (snap = take(snap, e, i + 1)));
    assert.deepEqual([stateName(snap.value), taskFrontier(snap.value)], ['stale', 'rerun']);
    assert.deepEqual(snap.context.evidence, {}, 'nothing of the stale run is retained as evidence');
    assert.equal(snap.context.lastRejection?.detail, `spec bound ${D('s').slice(0, 19)}, now gone`);
    snap = take(
      snap,
      { type: 'assignment.commit', generation: 2, harness: 'codex', purpose: 'work', assignmentDigest: D('2') },
      7,
    );
    assert.deepEqual(snap.value, { assigned: 'compiling' });
  });

  it('a Goal revision is taken in any non-final state and moves nothing', () => {
    const snap = take(
      evaluating(),
      { type: 'goal.revise', goalRevision: 2, goalDigest: D('g'), origin: 'external' },
      7,
    );
    assert.deepEqual([stateName(snap.value), snap.context.goal], ['evaluating', { revision: 2, digest: D('g') }]);
  });
});
