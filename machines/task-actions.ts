import { assertEvent, assign } from 'xstate';
import type { TaskEvent } from './task-events.js';
import type { RejectionReason, RequestState, TaskMachineContext } from './task-context.js';
import { rejection } from './rejection-detail.js';

/** `assign` for the Task statechart's context and events. */
const update = assign<TaskMachineContext, TaskEvent, undefined, TaskEvent, never>;

/** Counts a retained event as rejected and keeps it as the latest rejection. */
function reject(reason: RejectionReason) {
  return update(({ context, event }) => ({
    rejected: context.rejected + 1,
    lastRejection: rejection(context, event, reason),
  }));
}

/**
 * The Task statechart's actions (task-machine.ts): `assign`s recording what was admitted, and the
 * rejections it retains. Nothing else runs in the machine.
 */
export const TASK_ACTIONS = {
  rejectStale: reject('stale_assignment'),
  rejectMissing: reject('missing_artifact'),
  rejectContext: reject('context_mismatch'),
  rejectIdentity: reject('identity_conflict'),
  rejectVerification: reject('verification_failed'),
  rejectStaleContext: reject('context_stale'),
  rejectSuperseded: reject('superseded'),
  rejectCandidate: reject('candidate_unknown'),
  rejectAuthority: reject('untrusted_authority'),
  rejectAction: reject('action_failed'),
  rejectEffectFailed: reject('effect_failed'),
  rejectEffectUnknown: reject('effect_unknown'),
  rejectEndpointChanged: reject('effect_endpoint_changed'),
  rejectRequestUnknown: reject('decision_unknown'),
  rejectNotPending: reject('decision_not_pending'),
  rejectExpired: reject('decision_expired'),
  rejectRevoked: reject('decision_revoked'),
  rejectRequestStale: reject('decision_stale'),
  rejectAnswer: reject('answer_not_allowed'),
  rejectHarness: reject('harness_unknown'),
  rejectJoin: reject('join_unsatisfied'),
  openBranch: update(({ event }) => {
    assertEvent(event, 'branch.open');
    const children = Object.fromEntries(
      event.children.map((c) => [
        c.taskId,
        {
          harness: c.harness,
          item: c.item ?? null,
          status: 'open' as const,
          state: null,
          outcomeDigest: null,
          ended: null,
          late: false,
        },
      ]),
    );
    return {
      branch: {
        branchId: event.branchId,
        generation: event.generation,
        kind: event.kind,
        join: event.join,
        children,
        winners: null,
        reason: null,
      },
    };
  }),
  // A child's end: kept in the branch, in the order the ends came (late: after the join, retained `superseded`).
  observeChild: update(({ context, event }) => {
    assertEvent(event, 'branch.observe');
    const branch = context.branch!;
    const ended = Object.values(branch.children).filter((c) => c.ended !== null).length + 1;
    const child = {
      ...branch.children[event.child]!,
      status: event.verified ? ('verified' as const) : ('failed' as const),
      state: event.state,
      outcomeDigest: event.outcomeDigest,
      ended,
      late: branch.winners !== null,
    };
    return { branch: { ...branch, children: { ...branch.children, [event.child]: child } } };
  }),
  // The join, with the stage's artifacts the merge of the winners' work brought, as a run's are kept.
  joinBranch: update(({ context, event }) => {
    assertEvent(event, 'branch.join');
    const evidence = { ...context.evidence };
    for (const name of Object.keys(event.evidence).sort())
      evidence[name] = { digest: event.evidence[name]!, generation: event.generation };
    return { evidence, branch: { ...context.branch!, winners: event.winners, reason: event.reason } };
  }),
  intendEffect: update(({ event }) => {
    assertEvent(event, 'effect.intend');
    const { requestId, generation, candidateId, intentDigest, reconcile } = event;
    return {
      effect: {
        requestId,
        generation,
        candidateId,
        intentDigest,
        reconcile,
        status: 'intended' as const,
        receiptDigest: null,
      },
    };
  }),
  recordEffect: update(({ context, event }) => {
    assertEvent(event, ['effect.record', 'effect.reconcile']);
    const receiptDigest = event.type === 'effect.record' ? event.receiptDigest : event.receiptDigests[0]!;
    return { effect: { ...context.effect!, status: 'recorded' as const, receiptDigest } };
  }),
  loseEffect: update({ effect: ({ context }) => ({ ...context.effect!, status: 'unknown' as const }) }),
  failEffect: update({ effect: ({ context }) => ({ ...context.effect!, status: 'failed' as const }) }),
  abandonEffect: update({ effect: ({ context }) => ({ ...context.effect!, status: 'abandoned' as const }) }),
  openRequest: update(({ context, event }) => {
    assertEvent(event, 'request.open');
    const { requestId, generation, requestDigest, about, contextDigest, expiresAt } = event;
    const request: RequestState = {
      generation,
      digest: requestDigest,
      about,
      contextDigest,
      expiresAt,
      status: 'pending',
      answer: null,
    };
    return { requests: { ...context.requests, [requestId]: request } };
  }),
  answerRequest: update(({ context, event }) => {
    assertEvent(event, 'request.answer');
    const request = { ...context.requests[event.requestId]!, status: 'answered' as const, answer: event.answer };
    return { requests: { ...context.requests, [event.requestId]: request } };
  }),
  expireRequest: update(({ context, event }) => {
    assertEvent(event, ['request.answer', 'request.expire']);
    const request = { ...context.requests[event.requestId]!, status: 'expired' as const };
    return { requests: { ...context.requests, [event.requestId]: request } };
  }),
  revokeRequest: update(({ context, event }) => {
    assertEvent(event, ['request.answer', 'request.revoke']);
    const request = { ...context.requests[event.requestId]!, status: 'revoked' as const };
    return { requests: { ...context.requests, [event.requestId]: request } };
  }),
  create: update(({ event }) => {
    assertEvent(event, 'task.created');
    return {
      taskId: event.taskId,
      attempt: event.attempt,
      specDigest: event.specDigest,
      requiredArtifacts: [...event.requiredArtifacts].sort(),
    };
  }),
  commitAssignment: update(({ context, event }) => {
    assertEvent(event, 'assignment.commit');
    const { generation, harness, purpose, assignmentDigest } = event;
    // A new generation revokes what the previous Assignment asked: its answers would bind stale work.
    // A provider's permission request is the Task's, not the generation's: its answer is for the
    // next Assignment (docs/permissions.md), so it stays pending.
    const requests = Object.fromEntries(
      Object.entries(context.requests).map(([id, r]) => [
        id,
        r.status === 'pending' && r.about !== 'permission' ? { ...r, status: 'revoked' as const } : r,
      ]),
    );
    return {
      requests,
      generation,
      assignment: { generation, harness, purpose, digest: assignmentDigest },
      contextDigest: null,
      promptDigest: null,
      dispatch: null,
      proposal: null,
      decision: null,
      asked: null,
      action: null,
    };
  }),
  compileContext: update(({ event }) => {
    assertEvent(event, 'context.compile');
    return { contextDigest: event.contextDigest, promptDigest: event.promptDigest ?? null };
  }),
  reviseGoal: update(({ event }) => {
    assertEvent(event, 'goal.revise');
    return { goal: { revision: event.goalRevision, digest: event.goalDigest } };
  }),
  askAuthority: update(({ event }) => {
    assertEvent(event, 'decision.submit');
    const { generation, contextDigest, candidateId, decisionDigest } = event;
    return { asked: { generation, contextDigest, candidateId, digest: decisionDigest } };
  }),
  approveAsked: update(({ context }) => ({ decision: context.asked, asked: null })),
  dropAsked: update({ asked: null }),
  decide: update(({ event }) => {
    assertEvent(event, 'decision.submit');
    const { generation, contextDigest, candidateId, decisionDigest } = event;
    return { decision: { generation, contextDigest, candidateId, digest: decisionDigest } };
  }),
  recordAction: update(({ event }) => {
    assertEvent(event, 'action.record');
    return { action: { generation: event.generation, candidateId: event.candidateId, ok: event.ok } };
  }),
  intendDispatch: update(({ context, event }) => {
    assertEvent(event, 'dispatch.intend');
    return {
      dispatch: {
        clientRequestId: event.clientRequestId,
        status: 'intended' as const,
        jobId: null,
        generation: context.generation,
      },
    };
  }),
  acknowledge: update(({ context, event }) => {
    assertEvent(event, ['dispatch.ack', 'dispatch.reconcile']);
    const jobId = event.type === 'dispatch.ack' ? event.jobId : event.jobIds[0]!;
    return { dispatch: { ...context.dispatch!, status: 'acknowledged' as const, jobId } };
  }),
  loseDispatch: update({ dispatch: ({ context }) => ({ ...context.dispatch!, status: 'unknown' as const }) }),
  observeRun: update(({ context, event }) => {
    assertEvent(event, 'run.observe');
    const evidence = { ...context.evidence };
    for (const name of Object.keys(event.evidence).sort())
      evidence[name] = { digest: event.evidence[name]!, generation: event.generation };
    return {
      evidence,
      lastReceipt: event.receiptDigest,
      dispatch: { ...context.dispatch!, status: 'observed' as const },
    };
  }),
  propose: update(({ event }) => {
    assertEvent(event, 'completion.propose');
    return { proposal: { generation: event.generation, digest: event.proposalDigest } };
  }),
  recordVerification: update(({ event }) => {
    assertEvent(event, 'verification.record');
    const { generation, verificationDigest, passed, sourceDigest } = event;
    return { verification: { generation, digest: verificationDigest, passed, sourceDigest } };
  }),
  commitOutcome: update(({ event }) => {
    assertEvent(event, 'verification.record');
    // The `passed` guard admits a verification only with the outcome it names.
    return { outcome: { digest: event.outcomeDigest!, revision: event.revision } };
  }),
  cancel: update(({ event }) => {
    assertEvent(event, 'task.cancel');
    return { cancelReason: event.reason };
  }),
  // A steer changes no Task fact: the admitted event, in the history, is the record, and the Host
  // hands its message to the Loop v0 conversation of the Task's Attempt (host/loop-steers.ts).
  steer: update(({ event }) => {
    assertEvent(event, 'task.steer');
    return {};
  }),
};
