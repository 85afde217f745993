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

/** The Host's request about the held candidate's authority (`q`), bound to Context `c`. */
const openAuthority = (over: Record<string, unknown> = {}) => ({
  type: 'request.open',
  requestId: 'q',
  requestDigest: D('q'),
  generation: 1,
  about: 'authority',
  contextDigest: D('c'),
  expiresAt: null,
  ...over,
});

const answer = (value: string, over: Record<string, unknown> = {}) => ({
  type: 'request.answer',
  requestId: 'q',
  answer: value,
  answeredBy: 'ops',
  note: '',
  now: 50,
  allowed: true,
  origin: 'external',
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

  it('an untrusted candidate on a stage that asks is retained untrusted_authority and held while a person is asked; approve performs it', () => {
    let snap = take(evaluating(), decision({ authority: 'untrusted', ask: true, candidateId: 'strip' }), 7);
    assert.deepEqual(
      [stateName(snap.value), taskFrontier(snap.value), snap.context.lastRejection?.reason],
      ['authorizing.escalating', 'escalate_authority', 'untrusted_authority'],
    );
    assert.match(snap.context.lastRejection!.detail!, /a person is asked/);
    assert.deepEqual([snap.context.decision, snap.context.asked?.candidateId], [null, 'strip']);
    // While asking, another decision on the same Context is not taken (nothing written).
    assert.equal(snap.can({ ...decision(), origin: 'external', revision: 8 } as TaskEvent), false);
    snap = take(snap, openAuthority(), 8);
    assert.deepEqual([stateName(snap.value), taskFrontier(snap.value)], ['authorizing.held', 'none']);
    const approved = take(snap, answer('approve'), 9);
    assert.equal(stateName(approved.value), 'acting');
    assert.deepEqual(approved.context.decision, {
      generation: 1,
      contextDigest: D('c'),
      candidateId: 'strip',
      digest: D('d'),
    });
    assert.deepEqual([approved.context.asked, approved.context.requests['q']?.answer], [null, 'approve']);
    const refused = take(snap, answer('refuse'), 9);
    assert.deepEqual(
      [stateName(refused.value), refused.context.decision, refused.context.asked],
      ['waiting', null, null],
    );
  });

  it('the authority answer is refused on a moved world (the stage reruns) or past its deadline (the Task waits); a new Assignment revokes the request', () => {
    const held = [openAuthority({ expiresAt: 100 })].reduce(
      (snap, e, i) => take(snap, e, 8 + i),
      take(evaluating(), decision({ authority: 'untrusted', ask: true }), 7),
    );
    const stale = take(held, answer('approve', { stale: [{ sourceId: 'policy', bound: D('1'), current: D('2') }] }), 9);
    assert.deepEqual(
      [stateName(stale.value), stale.context.lastRejection?.reason, stale.context.requests['q']?.status],
      ['stale', 'decision_stale', 'revoked'],
    );
    const late = take(held, answer('approve', { now: 100 }), 9);
    assert.deepEqual(
      [stateName(late.value), late.context.lastRejection?.reason, late.context.decision],
      ['waiting', 'decision_expired', null],
    );
    const unknown = take(held, answer('maybe', { allowed: false }), 9);
    assert.deepEqual(
      [stateName(unknown.value), unknown.context.lastRejection?.reason],
      ['authorizing.held', 'answer_not_allowed'],
    );
    const next = take(
      held,
      { type: 'assignment.commit', generation: 2, harness: 'codex', purpose: 'work', assignmentDigest: D('2') },
      9,
    );
    assert.deepEqual(
      [next.value, next.context.requests['q']?.status, next.context.asked],
      [{ assigned: 'compiling' }, 'revoked', null],
    );
  });

  it('an untrusted candidate on a stage that does not ask is refused and the Task waits, holding nothing', () => {
    const snap = take(evaluating(), decision({ authority: 'untrusted' }), 7);
    assert.deepEqual([stateName(snap.value), snap.context.asked], ['waiting', null]);
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
