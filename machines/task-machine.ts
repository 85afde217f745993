import { and, assertEvent, assign, not, or, setup, type SnapshotFrom } from 'xstate';
import type { TaskEvent } from './task-events.js';
import { EMPTY_TASK_CONTEXT, type RejectionReason, type RequestState, type TaskContext } from './task-context.js';
import { generationOf, missingEvidence, rejection, requestOf, staleOf } from './rejection-detail.js';

/**
 * Version of the statechart's shape and semantics. Stored with every projection; a stored
 * projection of another version is replayed, never trusted. Bump it on any change to states,
 * guards or context, and add a persisted-snapshot fixture for the new version under
 * test/fixtures/machines/.
 */
export const TASK_MACHINE_VERSION = 6;

/** Counts a retained event as rejected and keeps it as the latest rejection. */
function reject(reason: RejectionReason) {
  return assign<TaskContext, TaskEvent, undefined, TaskEvent, never>(({ context, event }) => ({
    rejected: context.rejected + 1,
    lastRejection: rejection(context, event, reason),
  }));
}

/**
 * How a decision on the current Context is taken (evaluating, waiting): an unknown Context is a
 * mismatch, an earlier or already-decided one superseded (both retained where they are); an
 * invented candidate or one without trusted authority leaves the Task waiting with nothing done,
 * unless its stage puts such a candidate to a person (`authorizing`, still retained
 * `untrusted_authority`); a moved read set makes the Assignment stale; otherwise the Host acts on
 * the candidate.
 */
const DECISION = [
  { guard: not('contextKnown'), actions: 'rejectContext' },
  { guard: or([not('contextMatches'), 'decided']), actions: 'rejectSuperseded' },
  { guard: not('candidateKnown'), target: '#task.waiting', actions: 'rejectCandidate' },
  { guard: 'stale', target: '#task.stale', actions: 'rejectStaleContext' },
  {
    guard: and([not('trustedAuthority'), 'asksAuthority', not('effectBlocks')]),
    target: '#task.authorizing',
    actions: ['rejectAuthority', 'askAuthority'],
  },
  { guard: not('trustedAuthority'), target: '#task.waiting', actions: 'rejectAuthority' },
  { guard: 'effectBlocks', target: '#task.waiting', actions: 'rejectEffectUnknown' },
  { target: '#task.acting', actions: 'decide' },
] as const;

/**
 * How an answer to a DecisionRequest is refused, in order (each retained with its code, the
 * request consumed at most once): unknown, already consumed, past its deadline (marking it
 * expired), revoked, bound to a world or Context that moved (marking it revoked), or not one of
 * its answers. An answer passing all of them is admitted.
 */
const ANSWER_REFUSALS = [
  { guard: not('requestKnown'), actions: 'rejectRequestUnknown' },
  { guard: 'requestAnswered', actions: 'rejectNotPending' },
  { guard: 'requestExpired', actions: ['expireRequest', 'rejectExpired'] },
  { guard: 'requestRevoked', actions: 'rejectRevoked' },
  { guard: 'requestStale', actions: ['revokeRequest', 'rejectRequestStale'] },
  { guard: not('answerAllowed'), actions: 'rejectAnswer' },
] as const;

/**
 * How the answer to the request about a candidate's authority is taken (`authorizing.held`): past
 * its deadline the Task waits; bound to a world that moved, the stage reruns; `approve` performs
 * the held decision, any other allowed answer leaves the Task waiting. Answers to the Task's other
 * requests are taken as anywhere else.
 */
const AUTHORITY_ANSWER = [
  {
    guard: and(['authorityRequest', 'requestPending', 'requestExpired']),
    target: '#task.waiting',
    actions: ['expireRequest', 'rejectExpired', 'dropAsked'],
  },
  {
    guard: and(['authorityRequest', 'requestPending', 'requestStale']),
    target: '#task.stale',
    actions: ['revokeRequest', 'rejectRequestStale', 'dropAsked'],
  },
  {
    guard: and(['authorityRequest', 'requestPending', 'answerAllowed', 'answersApprove']),
    target: '#task.acting',
    actions: ['answerRequest', 'approveAsked'],
  },
  {
    guard: and(['authorityRequest', 'requestPending', 'answerAllowed']),
    target: '#task.waiting',
    actions: ['answerRequest', 'dropAsked'],
  },
  ...ANSWER_REFUSALS,
  { actions: 'answerRequest' },
] as const;

/**
 * An Assignment, of the next generation, naming a harness the Host that admitted it does not run:
 * retained where the Task is (it would wait at dispatch forever), refused `harness_unknown`.
 */
const UNKNOWN_HARNESS = { guard: and(['nextGeneration', 'harnessUnknown']), actions: 'rejectHarness' } as const;

/**
 * What a lookup of the Effect's request id found: one receipt records it, more than one blocks
 * the Task (fail-closed, as for dispatch), none leaves it unknown and asks an operator.
 */
const EFFECT_RECONCILE = [
  { guard: and(['fromHost', 'sameEffect', 'oneReceipt']), target: '#task.evaluating', actions: 'recordEffect' },
  { guard: and(['fromHost', 'sameEffect', 'manyReceipts']), target: '#task.blocked', actions: 'rejectIdentity' },
  { guard: and(['fromHost', 'sameEffect']), target: '#task.effect_unknown.escalating' },
] as const;

/**
 * The Host's own submission of its provider's decision leaves `evaluating` whatever it named: a
 * decision that cannot be taken leaves the Task waiting for the next Assignment (it would
 * otherwise be evaluated, and refused, again).
 */
const EVALUATED_DECISION = [
  { guard: and(['fromHost', not('contextKnown')]), target: '#task.waiting', actions: 'rejectContext' },
  {
    guard: and(['fromHost', or([not('contextMatches'), 'decided'])]),
    target: '#task.waiting',
    actions: 'rejectSuperseded',
  },
  ...DECISION,
] as const;

/**
 * The Task statechart (docs/design.md, "The statechart"). Pure: guards decide admission, `assign` records what was
 * admitted, and nothing else runs. What the Host must do next (compile a Context, dispatch,
 * reconcile, verify) is derived from the state by `taskFrontier`, never from replayed actions.
 *
 * Events that the current state cannot take have no enabled transition (`snapshot.can(e)` is
 * false); the kernel refuses them without writing. Events that are taken but rejected
 * (stale generation, missing evidence, Context mismatch) are retained: they are appended and
 * their rejection is counted in `context.rejected`, the latest kept in `context.lastRejection`
 * (the journal holds every one, each event with its disposition).
 */
export const taskMachine = setup({
  types: {} as { context: TaskContext; events: TaskEvent },
  guards: {
    fromHost: ({ event }) => event.origin === 'host',
    currentGeneration: ({ context, event }) => generationOf(event) === context.generation,
    staleGeneration: ({ context, event }) => {
      const generation = generationOf(event);
      return generation !== undefined && generation < context.generation;
    },
    nextGeneration: ({ context, event }) => generationOf(event) === context.generation + 1,
    harnessUnknown: ({ event }) =>
      event.type === 'assignment.commit' && event.harnesses !== undefined && !event.harnesses.includes(event.harness),
    sameRequest: ({ context, event }) =>
      'clientRequestId' in event && context.dispatch?.clientRequestId === event.clientRequestId,
    oneJob: ({ event }) => event.type === 'dispatch.reconcile' && event.jobIds.length === 1,
    manyJobs: ({ event }) => event.type === 'dispatch.reconcile' && event.jobIds.length > 1,
    contextMatches: ({ context, event }) => 'contextDigest' in event && event.contextDigest === context.contextDigest,
    evidenceComplete: ({ context, event }) =>
      event.type === 'completion.propose' && missingEvidence(context, event.evidence).length === 0,
    passed: ({ event }) => event.type === 'verification.record' && event.passed && event.outcomeDigest !== null,
    stale: ({ event }) => staleOf(event).length > 0,
    contextKnown: ({ event }) => event.type === 'decision.submit' && event.known,
    decided: ({ context, event }) =>
      event.type === 'decision.submit' && context.decision?.contextDigest === event.contextDigest,
    candidateKnown: ({ event }) => event.type === 'decision.submit' && event.authority !== null,
    trustedAuthority: ({ event }) => event.type === 'decision.submit' && event.authority === 'trusted',
    asksAuthority: ({ event }) => event.type === 'decision.submit' && event.ask === true,
    actionOk: ({ event }) => event.type === 'action.record' && event.ok,
    sameEffect: ({ context, event }) => 'requestId' in event && context.effect?.requestId === event.requestId,
    reconcileByHost: ({ context }) => context.effect?.reconcile === 'host',
    oneReceipt: ({ event }) => event.type === 'effect.reconcile' && event.receiptDigests.length === 1,
    manyReceipts: ({ event }) => event.type === 'effect.reconcile' && event.receiptDigests.length > 1,
    // While an Effect is unknown nothing may perform another or declare it failed: only a lookup can tell.
    effectBlocks: ({ context, event }) =>
      event.type === 'decision.submit' &&
      context.effect?.status === 'unknown' &&
      (event.action === 'effect' || event.action === 'abandon'),
    requestNew: ({ context, event }) => 'requestId' in event && !Object.hasOwn(context.requests, event.requestId),
    requestKnown: ({ context, event }) => requestOf(context, event) !== undefined,
    requestPending: ({ context, event }) => requestOf(context, event)?.status === 'pending',
    requestAnswered: ({ context, event }) => requestOf(context, event)?.status === 'answered',
    requestRevoked: ({ context, event }) => requestOf(context, event)?.status === 'revoked',
    // Decided on the clock reading the kernel wrote into the event, so replay decides the same way.
    requestExpired: ({ context, event }) => {
      const request = requestOf(context, event);
      if (request?.status === 'expired') return true;
      const now = 'now' in event ? event.now : undefined;
      return (
        request?.status === 'pending' && request.expiresAt !== null && now !== undefined && now >= request.expiresAt
      );
    },
    requestStale: ({ context, event }) => {
      const request = requestOf(context, event);
      return (
        staleOf(event).length > 0 || (request?.contextDigest != null && request.contextDigest !== context.contextDigest)
      );
    },
    answerAllowed: ({ event }) => event.type === 'request.answer' && event.allowed,
    effectRequest: ({ context, event }) => requestOf(context, event)?.about === 'effect',
    authorityRequest: ({ context, event }) => requestOf(context, event)?.about === 'authority',
    answersApprove: ({ event }) => event.type === 'request.answer' && event.answer === 'approve',
    answersReconcile: ({ event }) => event.type === 'request.answer' && event.answer === 'reconcile',
    answersAbandon: ({ event }) => event.type === 'request.answer' && event.answer === 'abandon',
  },
  actions: {
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
    rejectRequestUnknown: reject('decision_unknown'),
    rejectNotPending: reject('decision_not_pending'),
    rejectExpired: reject('decision_expired'),
    rejectRevoked: reject('decision_revoked'),
    rejectRequestStale: reject('decision_stale'),
    rejectAnswer: reject('answer_not_allowed'),
    rejectHarness: reject('harness_unknown'),
    intendEffect: assign(({ event }) => {
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
    recordEffect: assign(({ context, event }) => {
      assertEvent(event, ['effect.record', 'effect.reconcile']);
      const receiptDigest = event.type === 'effect.record' ? event.receiptDigest : event.receiptDigests[0]!;
      return { effect: { ...context.effect!, status: 'recorded' as const, receiptDigest } };
    }),
    loseEffect: assign({ effect: ({ context }) => ({ ...context.effect!, status: 'unknown' as const }) }),
    failEffect: assign({ effect: ({ context }) => ({ ...context.effect!, status: 'failed' as const }) }),
    abandonEffect: assign({ effect: ({ context }) => ({ ...context.effect!, status: 'abandoned' as const }) }),
    openRequest: assign(({ context, event }) => {
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
    answerRequest: assign(({ context, event }) => {
      assertEvent(event, 'request.answer');
      const request = { ...context.requests[event.requestId]!, status: 'answered' as const, answer: event.answer };
      return { requests: { ...context.requests, [event.requestId]: request } };
    }),
    expireRequest: assign(({ context, event }) => {
      assertEvent(event, ['request.answer', 'request.expire']);
      const request = { ...context.requests[event.requestId]!, status: 'expired' as const };
      return { requests: { ...context.requests, [event.requestId]: request } };
    }),
    revokeRequest: assign(({ context, event }) => {
      assertEvent(event, ['request.answer', 'request.revoke']);
      const request = { ...context.requests[event.requestId]!, status: 'revoked' as const };
      return { requests: { ...context.requests, [event.requestId]: request } };
    }),
    create: assign(({ event }) => {
      assertEvent(event, 'task.created');
      return {
        taskId: event.taskId,
        attempt: event.attempt,
        specDigest: event.specDigest,
        requiredArtifacts: [...event.requiredArtifacts].sort(),
      };
    }),
    commitAssignment: assign(({ context, event }) => {
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
    compileContext: assign(({ event }) => {
      assertEvent(event, 'context.compile');
      return { contextDigest: event.contextDigest, promptDigest: event.promptDigest ?? null };
    }),
    reviseGoal: assign(({ event }) => {
      assertEvent(event, 'goal.revise');
      return { goal: { revision: event.goalRevision, digest: event.goalDigest } };
    }),
    askAuthority: assign(({ event }) => {
      assertEvent(event, 'decision.submit');
      const { generation, contextDigest, candidateId, decisionDigest } = event;
      return { asked: { generation, contextDigest, candidateId, digest: decisionDigest } };
    }),
    approveAsked: assign(({ context }) => ({ decision: context.asked, asked: null })),
    dropAsked: assign({ asked: null }),
    decide: assign(({ event }) => {
      assertEvent(event, 'decision.submit');
      const { generation, contextDigest, candidateId, decisionDigest } = event;
      return { decision: { generation, contextDigest, candidateId, digest: decisionDigest } };
    }),
    recordAction: assign(({ event }) => {
      assertEvent(event, 'action.record');
      return { action: { generation: event.generation, candidateId: event.candidateId, ok: event.ok } };
    }),
    intendDispatch: assign(({ context, event }) => {
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
    acknowledge: assign(({ context, event }) => {
      assertEvent(event, ['dispatch.ack', 'dispatch.reconcile']);
      const jobId = event.type === 'dispatch.ack' ? event.jobId : event.jobIds[0]!;
      return { dispatch: { ...context.dispatch!, status: 'acknowledged' as const, jobId } };
    }),
    loseDispatch: assign({ dispatch: ({ context }) => ({ ...context.dispatch!, status: 'unknown' as const }) }),
    observeRun: assign(({ context, event }) => {
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
    propose: assign(({ event }) => {
      assertEvent(event, 'completion.propose');
      return { proposal: { generation: event.generation, digest: event.proposalDigest } };
    }),
    recordVerification: assign(({ event }) => {
      assertEvent(event, 'verification.record');
      const { generation, verificationDigest, passed, sourceDigest } = event;
      return { verification: { generation, digest: verificationDigest, passed, sourceDigest } };
    }),
    commitOutcome: assign(({ event }) => {
      assertEvent(event, 'verification.record');
      // The `passed` guard admits a verification only with the outcome it names.
      return { outcome: { digest: event.outcomeDigest!, revision: event.revision } };
    }),
    cancel: assign(({ event }) => {
      assertEvent(event, 'task.cancel');
      return { cancelReason: event.reason };
    }),
  },
}).createMachine({
  id: 'task',
  context: EMPTY_TASK_CONTEXT,
  initial: 'new',
  on: {
    // Retained, never acted upon: proposals and results of an earlier Assignment generation.
    'completion.propose': { guard: 'staleGeneration', actions: 'rejectStale' },
    'run.observe': { guard: and(['fromHost', 'staleGeneration']), actions: 'rejectStale' },
    'verification.record': { guard: and(['fromHost', 'staleGeneration']), actions: 'rejectStale' },
    // Elsewhere a decision is retained only when it can never be taken; one on the current, undecided
    // Context arriving before its stage is evaluated is refused (invalid_transition) without a write.
    'decision.submit': [
      { guard: not('contextKnown'), actions: 'rejectContext' },
      { guard: or([not('contextMatches'), 'decided']), actions: 'rejectSuperseded' },
    ],
    // The Goal moves under in-flight work; whatever was made against the old one is stale at admission.
    'goal.revise': { actions: 'reviseGoal' },
    'task.cancel': { target: '.cancelled', actions: 'cancel' },
    // DecisionRequests live beside the lifecycle: opened by the Host, answered from outside, expired
    // at their deadline, revoked when what they were bound to moved.
    'request.open': { guard: and(['fromHost', 'requestNew']), actions: 'openRequest' },
    'request.answer': [...ANSWER_REFUSALS, { actions: 'answerRequest' }],
    'request.expire': { guard: and(['fromHost', 'requestPending', 'requestExpired']), actions: 'expireRequest' },
    'request.revoke': { guard: and(['fromHost', 'requestPending']), actions: 'revokeRequest' },
  },
  states: {
    new: {
      on: { 'task.created': { guard: 'fromHost', target: 'open', actions: 'create' } },
    },
    open: {
      on: {
        'assignment.commit': [
          UNKNOWN_HARNESS,
          { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
        ],
      },
    },
    assigned: {
      initial: 'compiling',
      on: {
        // Replacement: a new generation fences everything the previous Assignment still has in flight.
        'assignment.commit': [
          UNKNOWN_HARNESS,
          { guard: 'nextGeneration', target: 'assigned', reenter: true, actions: 'commitAssignment' },
        ],
      },
      states: {
        compiling: {
          on: {
            'context.compile': {
              guard: and(['fromHost', 'currentGeneration']),
              target: 'ready',
              actions: 'compileContext',
            },
          },
        },
        ready: {
          on: {
            'dispatch.intend': {
              guard: and(['fromHost', 'currentGeneration']),
              target: 'dispatching',
              actions: 'intendDispatch',
            },
          },
        },
        dispatching: {
          on: {
            'dispatch.ack': { guard: and(['fromHost', 'sameRequest']), target: 'running', actions: 'acknowledge' },
            'dispatch.lost': { guard: and(['fromHost', 'sameRequest']), target: 'unknown', actions: 'loseDispatch' },
          },
        },
        unknown: {
          on: {
            // No job found: no transition, the dispatch stays unknown (never redispatched blindly).
            'dispatch.reconcile': [
              { guard: and(['fromHost', 'sameRequest', 'oneJob']), target: 'running', actions: 'acknowledge' },
              {
                guard: and(['fromHost', 'sameRequest', 'manyJobs']),
                target: '#task.blocked',
                actions: 'rejectIdentity',
              },
            ],
          },
        },
        running: {
          on: {
            'run.observe': [
              {
                guard: and(['fromHost', 'currentGeneration', 'sameRequest', not('contextMatches')]),
                actions: 'rejectContext',
              },
              {
                guard: and(['fromHost', 'currentGeneration', 'sameRequest', 'stale']),
                target: '#task.stale',
                actions: 'rejectStaleContext',
              },
              {
                guard: and(['fromHost', 'currentGeneration', 'sameRequest']),
                target: '#task.evaluating',
                actions: 'observeRun',
              },
            ],
          },
        },
      },
    },
    evaluating: {
      on: {
        'assignment.commit': [
          UNKNOWN_HARNESS,
          { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
        ],
        'evaluation.settle': { guard: and(['fromHost', 'currentGeneration']), target: 'waiting' },
        'completion.propose': [
          { guard: and(['currentGeneration', not('contextMatches')]), actions: 'rejectContext' },
          { guard: and(['currentGeneration', 'stale']), target: 'stale', actions: 'rejectStaleContext' },
          { guard: and(['currentGeneration', 'evidenceComplete']), target: 'verifying', actions: 'propose' },
          { guard: 'currentGeneration', target: 'waiting', actions: 'rejectMissing' },
        ],
        'decision.submit': EVALUATED_DECISION,
      },
    },
    waiting: {
      on: {
        'assignment.commit': [
          UNKNOWN_HARNESS,
          { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
        ],
        'decision.submit': DECISION,
      },
    },
    /**
     * A chosen candidate whose authority is not trusted, put to a person: the Host opens the
     * request about `authority` naming its untrusted sources (`escalating`, frontier
     * `escalate_authority`), then waits for its answer (`held`). A new Assignment revokes it.
     */
    authorizing: {
      initial: 'escalating',
      on: {
        'assignment.commit': [
          UNKNOWN_HARNESS,
          { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
        ],
      },
      states: {
        escalating: {
          on: { 'request.open': { guard: and(['fromHost', 'requestNew']), target: 'held', actions: 'openRequest' } },
        },
        held: {
          on: {
            'request.answer': AUTHORITY_ANSWER,
            'request.expire': [
              {
                guard: and(['fromHost', 'authorityRequest', 'requestPending', 'requestExpired']),
                target: '#task.waiting',
                actions: ['expireRequest', 'dropAsked'],
              },
              { guard: and(['fromHost', 'requestPending', 'requestExpired']), actions: 'expireRequest' },
            ],
            'request.revoke': [
              {
                guard: and(['fromHost', 'authorityRequest', 'requestPending']),
                target: '#task.waiting',
                actions: ['revokeRequest', 'dropAsked'],
              },
              { guard: and(['fromHost', 'requestPending']), actions: 'revokeRequest' },
            ],
          },
        },
      },
    },
    /** The Host performs the admitted candidate's action (frontier `act`); the provider only chose it. */
    acting: {
      on: {
        'assignment.commit': [
          UNKNOWN_HARNESS,
          { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
        ],
        // An Effect: its intent (request id, operation, target, input digest) is durable before the adapter is called.
        'effect.intend': {
          guard: and(['fromHost', 'currentGeneration']),
          target: 'effecting',
          actions: 'intendEffect',
        },
        // A `reconcile` candidate: the Host looked the unknown Effect up by its request id.
        'effect.reconcile': EFFECT_RECONCILE,
        'action.record': [
          { guard: and(['fromHost', 'currentGeneration', 'actionOk']), target: 'evaluating', actions: 'recordAction' },
          {
            guard: and(['fromHost', 'currentGeneration']),
            target: 'waiting',
            actions: ['recordAction', 'rejectAction'],
          },
        ],
      },
    },
    /**
     * The adapter is being called under the committed request id (frontier `confirm_effect`: a
     * Host that finds the Task here after a restart cannot know whether it was called, so the
     * Effect is unknown). Not reassignable: whatever happens is recorded first.
     */
    effecting: {
      on: {
        'effect.record': { guard: and(['fromHost', 'sameEffect']), target: 'evaluating', actions: 'recordEffect' },
        'effect.lost': [
          {
            guard: and(['fromHost', 'sameEffect', 'reconcileByHost']),
            target: 'effect_unknown',
            actions: 'loseEffect',
          },
          { guard: and(['fromHost', 'sameEffect']), target: 'waiting', actions: 'loseEffect' },
        ],
        'effect.fail': {
          guard: and(['fromHost', 'sameEffect']),
          target: 'waiting',
          actions: ['failEffect', 'rejectEffectFailed'],
        },
      },
    },
    /**
     * No answer came back for the Effect: it may have happened. Never performed again; the Host
     * looks it up by its request id (`checking`); when nothing is found it asks an operator
     * (`escalating` opens the DecisionRequest, `held` waits for the answer or a new Assignment).
     */
    effect_unknown: {
      initial: 'checking',
      on: {
        'assignment.commit': [
          UNKNOWN_HARNESS,
          { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
        ],
      },
      states: {
        checking: { on: { 'effect.reconcile': EFFECT_RECONCILE } },
        escalating: {
          on: { 'request.open': { guard: and(['fromHost', 'requestNew']), target: 'held', actions: 'openRequest' } },
        },
        held: {
          on: {
            'request.answer': [
              ...ANSWER_REFUSALS,
              { guard: and(['effectRequest', 'answersReconcile']), target: 'checking', actions: 'answerRequest' },
              {
                guard: and(['effectRequest', 'answersAbandon']),
                target: '#task.waiting',
                actions: ['answerRequest', 'abandonEffect'],
              },
              { actions: 'answerRequest' },
            ],
          },
        },
      },
    },
    /**
     * A trusted source the Assignment's Context read moved before its work was admitted: the Host
     * commits the next generation for the same stage (frontier `rerun`), compiled at the current revision.
     */
    stale: {
      on: {
        'assignment.commit': [
          UNKNOWN_HARNESS,
          { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
        ],
        // The Host gave up rerunning (the Context kept moving): the Task waits for a new Assignment.
        'evaluation.settle': { guard: and(['fromHost', 'currentGeneration']), target: 'waiting' },
      },
    },
    verifying: {
      on: {
        'verification.record': [
          {
            guard: and(['fromHost', 'currentGeneration', 'stale']),
            target: 'stale',
            actions: ['recordVerification', 'rejectStaleContext'],
          },
          {
            guard: and(['fromHost', 'currentGeneration', 'passed']),
            target: 'completed',
            actions: ['recordVerification', 'commitOutcome'],
          },
          {
            guard: and(['fromHost', 'currentGeneration']),
            target: 'waiting',
            actions: ['recordVerification', 'rejectVerification'],
          },
        ],
      },
    },
    /** Fail-closed: more than one Runtime job claims this Task's dispatch. Only cancellation leaves it. */
    blocked: {},
    completed: { type: 'final' },
    cancelled: { type: 'final' },
  },
});

export type TaskMachine = typeof taskMachine;

/** A Task's machine snapshot (live: what an actor holds, a replay produces, a checkpoint restores). */
export type TaskSnapshot = SnapshotFrom<typeof taskMachine>;
