import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { stateName, taskFrontier, taskMachine, type TaskEvent } from '../../machines/index.js';
import { D, observedAssignment } from '../support/machine-events.js';

type Snap = SnapshotFrom<typeof taskMachine>;
const EFFECT = 't1/a1/g1/effect';
const OPERATOR = `${EFFECT}/operator`;
const T0 = Date.UTC(2026, 0, 1);

let revision = 0;
/** Takes the event with a pure transition; the state must be able to take it. */
function take(snap: Snap, event: Record<string, unknown>): Snap {
  const full = { origin: 'host', revision: ++revision, ...event } as TaskEvent;
  assert.ok(snap.can(full), `${stateName(snap.value)} should take ${full.type}`);
  return transition(taskMachine, snap, full)[0];
}

/** Whether the state takes the event at all (the kernel refuses without writing when it does not). */
const takes = (snap: Snap, event: Record<string, unknown>) =>
  snap.can({ origin: 'host', revision: revision + 1, ...event } as TaskEvent);

const state = (snap: Snap) => stateName(snap.value);
const reason = (snap: Snap) => snap.context.lastRejection?.reason;

/** A decision stage at generation 1 whose candidate `apply` (an Effect) was admitted: `acting`. */
function acting(): Snap {
  let snap = initialTransition(taskMachine)[0];
  for (const e of [
    { type: 'task.created', taskId: 't1', attempt: 1, specDigest: D('a'), requiredArtifacts: ['choice.json'] },
    ...observedAssignment(1, D('c'), { purpose: 'decide' }),
    decision({ candidateId: 'apply', action: 'effect' }),
  ])
    snap = take(snap, e);
  assert.equal(state(snap), 'acting');
  return snap;
}

function decision(over: Record<string, unknown> = {}) {
  return {
    type: 'decision.submit',
    contextDigest: D('c'),
    candidateId: 'apply',
    decisionDigest: D('d'),
    generation: 1,
    known: true,
    authority: 'trusted',
    ...over,
  };
}

const intend = (reconcile: 'host' | 'decision' = 'host') => ({
  type: 'effect.intend',
  generation: 1,
  requestId: EFFECT,
  candidateId: 'apply',
  intentDigest: D('i'),
  reconcile,
});
const reconcile = (...receipts: string[]) => ({
  type: 'effect.reconcile',
  requestId: EFFECT,
  receiptDigests: receipts,
});
const open = (over: Record<string, unknown> = {}) => ({
  type: 'request.open',
  requestId: OPERATOR,
  requestDigest: D('q'),
  generation: 1,
  about: 'effect',
  contextDigest: D('c'),
  expiresAt: null,
  ...over,
});
const answer = (answer: string, over: Record<string, unknown> = {}) => ({
  type: 'request.answer',
  origin: 'external',
  requestId: OPERATOR,
  answer,
  answeredBy: 'operator',
  note: '',
  now: T0,
  allowed: true,
  ...over,
});

/** An Effect whose answer was lost and whose lookup found nothing: an operator request is pending. */
function held(): Snap {
  let snap = take(acting(), intend());
  snap = take(snap, { type: 'effect.lost', requestId: EFFECT, reason: 'reset' });
  snap = take(snap, reconcile());
  assert.equal(taskFrontier(snap.value), 'escalate_effect');
  snap = take(snap, open());
  assert.equal(state(snap), 'effect_unknown.held');
  return snap;
}

describe('Effects in the Task statechart', () => {
  it('records the receipt of a performed Effect, then evaluates the stage again', () => {
    let snap = take(acting(), intend());
    assert.deepEqual([state(snap), taskFrontier(snap.value)], ['effecting', 'confirm_effect']);
    // Not reassignable while the adapter is being called: the answer is recorded first.
    assert.equal(
      takes(snap, {
        type: 'assignment.commit',
        origin: 'external',
        generation: 2,
        harness: 'b',
        purpose: 'p',
        assignmentDigest: D('2'),
      }),
      false,
    );
    snap = take(snap, { type: 'effect.record', requestId: EFFECT, receiptDigest: D('r') });
    assert.equal(state(snap), 'evaluating');
    assert.deepEqual(snap.context.effect, {
      requestId: EFFECT,
      generation: 1,
      candidateId: 'apply',
      intentDigest: D('i'),
      reconcile: 'host',
      status: 'recorded',
      receiptDigest: D('r'),
    });
  });

  it('a lost answer makes the Effect unknown: one receipt found records it, two block the Task', () => {
    const lost = take(take(acting(), intend()), { type: 'effect.lost', requestId: EFFECT, reason: 'reset' });
    assert.deepEqual(
      [state(lost), taskFrontier(lost.value), lost.context.effect?.status],
      ['effect_unknown.checking', 'reconcile_effect', 'unknown'],
    );
    const one = take(lost, reconcile(D('5')));
    assert.deepEqual(
      [state(one), one.context.effect?.status, one.context.effect?.receiptDigest],
      ['evaluating', 'recorded', D('5')],
    );
    const two = take(lost, reconcile(D('5'), D('6')));
    assert.deepEqual([state(two), reason(two)], ['blocked', 'identity_conflict']);
    assert.match(two.context.lastRejection!.detail!, /2 receipts under/);
  });

  it('an adapter refusal fails the Effect and the Task waits', () => {
    const snap = take(take(acting(), intend()), {
      type: 'effect.fail',
      requestId: EFFECT,
      code: 'ledger_invalid_request',
      reason: 'amount must be positive',
    });
    assert.deepEqual([state(snap), reason(snap), snap.context.effect?.status], ['waiting', 'effect_failed', 'failed']);
  });

  it('with reconcile by decision, a lost answer leaves the Task waiting and only a reconcile is admitted', () => {
    let snap = take(take(acting(), intend('decision')), { type: 'effect.lost', requestId: EFFECT, reason: 'reset' });
    assert.deepEqual([state(snap), snap.context.effect?.status], ['waiting', 'unknown']);
    // The next Assignment (another provider) runs the continuation stage against a new Context.
    for (const e of observedAssignment(2, D('f'), { harness: 'b', purpose: 'continue', evidenceDigest: D('8') }))
      snap = take(snap, e);
    const next = (over: Record<string, unknown>) => decision({ contextDigest: D('f'), generation: 2, ...over });
    for (const action of ['effect', 'abandon']) {
      const refused = take(snap, next({ candidateId: `x-${action}`, action }));
      assert.deepEqual([state(refused), reason(refused)], ['waiting', 'effect_unknown']);
      assert.match(refused.context.lastRejection!.detail!, new RegExp(`not ${action}`));
    }
    snap = take(snap, next({ candidateId: 'look-up', action: 'reconcile' }));
    assert.equal(state(snap), 'acting');
    snap = take(snap, reconcile(D('7')));
    assert.deepEqual([state(snap), snap.context.effect?.status], ['evaluating', 'recorded']);
  });

  it('nothing found: an operator answers reconcile (look again) or abandon (the Task waits)', () => {
    const again = take(held(), answer('reconcile'));
    assert.deepEqual([state(again), again.context.requests[OPERATOR]?.status], ['effect_unknown.checking', 'answered']);
    const abandoned = take(held(), answer('abandon'));
    assert.deepEqual([state(abandoned), abandoned.context.effect?.status], ['waiting', 'abandoned']);
    // A new Assignment may take over from an unknown Effect; the Effect stays unknown and the request is revoked.
    const next = take(held(), {
      type: 'assignment.commit',
      origin: 'external',
      generation: 2,
      harness: 'b',
      purpose: 'continue',
      assignmentDigest: D('2'),
    });
    assert.deepEqual(
      [state(next), next.context.effect?.status, next.context.requests[OPERATOR]?.status],
      ['assigned.compiling', 'unknown', 'revoked'],
    );
  });
});

describe('DecisionRequests in the Task statechart', () => {
  it('refuses, in order: unknown, consumed, expired, revoked, stale, not an allowed answer', () => {
    const snap = held();
    const cases: Array<[Snap, Record<string, unknown>, string, RegExp]> = [
      [snap, answer('reconcile', { requestId: 'nope' }), 'decision_unknown', /no request nope/],
      [take(snap, answer('abandon')), answer('reconcile'), 'decision_not_pending', /already answered abandon/],
      [snap, answer('reconcile', { allowed: false, answer: 'maybe' }), 'answer_not_allowed', /maybe is not an answer/],
      [
        snap,
        answer('reconcile', { stale: [{ sourceId: 'spec', bound: D('1'), current: D('2') }] }),
        'decision_stale',
        /spec bound/,
      ],
    ];
    for (const [from, event, code, detail] of cases) {
      const after = take(from, event);
      assert.equal(reason(after), code);
      assert.match(after.context.lastRejection!.detail!, detail);
      assert.equal(state(after), state(from), `${code} leaves the state where it was`);
    }
    // A stale answer revokes the request: a later answer is decision_revoked.
    const stale = take(snap, answer('reconcile', { stale: [{ sourceId: 'spec', bound: D('1'), current: null }] }));
    assert.equal(stale.context.requests[OPERATOR]?.status, 'revoked');
    assert.equal(reason(take(stale, answer('reconcile'))), 'decision_revoked');
  });

  it('an answer racing the deadline is expired by the clock reading in the event, with or without request.expire', () => {
    let snap = take(acting(), intend());
    snap = take(snap, { type: 'effect.lost', requestId: EFFECT, reason: 'reset' });
    snap = take(snap, reconcile());
    snap = take(snap, open({ expiresAt: T0 + 60_000 }));
    const inTime = take(snap, answer('reconcile', { now: T0 + 59_999 }));
    assert.equal(inTime.context.requests[OPERATOR]?.status, 'answered');
    const late = take(snap, answer('reconcile', { now: T0 + 60_000 }));
    assert.deepEqual(
      [reason(late), late.context.requests[OPERATOR]?.status, state(late)],
      ['decision_expired', 'expired', 'effect_unknown.held'],
    );
    // The Host's own expiry: not before the deadline, then once.
    assert.equal(takes(snap, { type: 'request.expire', requestId: OPERATOR, now: T0 + 59_999 }), false);
    const expired = take(snap, { type: 'request.expire', requestId: OPERATOR, now: T0 + 60_000 });
    assert.equal(expired.context.requests[OPERATOR]?.status, 'expired');
    assert.equal(takes(expired, { type: 'request.expire', requestId: OPERATOR, now: T0 + 70_000 }), false);
    assert.equal(reason(take(expired, answer('reconcile', { now: T0 + 1 }))), 'decision_expired');
  });

  it('an answer bound to a Context the Task left is stale; opening a known id is not taken', () => {
    let snap = take(acting(), open({ about: 'operator', requestId: 'q1', contextDigest: D('0') }));
    assert.equal(takes(snap, open({ about: 'operator', requestId: 'q1' })), false);
    snap = take(snap, answer('yes', { requestId: 'q1' }));
    assert.equal(reason(snap), 'decision_stale');
    assert.match(snap.context.lastRejection!.detail!, /bound to Context/);
    const revoked = take(take(acting(), open({ about: 'operator', requestId: 'q2' })), {
      type: 'request.revoke',
      requestId: 'q2',
      reason: 'the world moved',
    });
    assert.equal(reason(take(revoked, answer('yes', { requestId: 'q2' }))), 'decision_revoked');
  });

  it('machine version 7: effect.refuse before any intent reruns on a moved target and waits on a changed endpoint, the Effect untouched', () => {
    const refuse = (code: string, over: Record<string, unknown> = {}) => ({
      type: 'effect.refuse',
      generation: 1,
      candidateId: 'apply',
      code,
      reason: 'endpoint bound k1, now k2',
      ...over,
    });
    const stale = [{ sourceId: 'effect:apply/target', bound: D('1'), current: D('2') }];
    const moved = take(acting(), refuse('context_stale', { stale }));
    assert.deepEqual([state(moved), reason(moved), moved.context.effect], ['stale', 'context_stale', null]);
    assert.equal(taskFrontier(moved.value), 'rerun');
    const changed = take(acting(), refuse('effect_endpoint_changed'));
    assert.deepEqual(
      [state(changed), reason(changed), changed.context.effect],
      ['waiting', 'effect_endpoint_changed', null],
    );
    assert.match(changed.context.lastRejection!.detail!, /^apply: endpoint bound k1, now k2$/);
    // Only before the intent: once the adapter may have been called, the Effect's answer decides.
    assert.equal(takes(take(acting(), intend()), refuse('effect_endpoint_changed')), false);
    assert.equal(takes(acting(), refuse('effect_endpoint_changed', { generation: 2 })), false);
  });

  it('machine version 7: effect.conflict blocks from effecting, checking and a reconcile, never recording the Effect', () => {
    const conflict = {
      type: 'effect.conflict',
      requestId: EFFECT,
      receiptDigests: [D('r')],
      reason: 'for other input',
    };
    const performing = take(acting(), intend());
    const fromPerform = take(performing, conflict);
    assert.deepEqual([state(fromPerform), reason(fromPerform)], ['blocked', 'identity_conflict']);
    assert.deepEqual(
      [fromPerform.context.effect?.status, fromPerform.context.effect?.receiptDigest],
      ['intended', null],
    );
    const checking = take(performing, { type: 'effect.lost', requestId: EFFECT, reason: 'no answer' });
    assert.equal(state(checking), 'effect_unknown.checking');
    const fromLookup = take(checking, conflict);
    assert.deepEqual([state(fromLookup), fromLookup.context.effect?.status], ['blocked', 'unknown']);
    assert.equal(takes(performing, { ...conflict, requestId: 'other/effect' }), false);
    // A lookup that cannot answer escalates as an empty one does.
    const unanswerable = take(checking, { ...reconcile(), unanswerable: 'no-lookup' });
    assert.equal(state(unanswerable), 'effect_unknown.escalating');
  });
});
