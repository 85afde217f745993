import { and, assertEvent, assign, not, or, setup, type SnapshotFrom } from 'xstate';
import type { StaleSource, TaskEvent } from './task-events.js';
import { EMPTY_TASK_CONTEXT, type Rejection, type RejectionReason, type TaskContext } from './task-context.js';

/**
 * Version of the statechart's shape and semantics. Stored with every projection; a stored
 * projection of another version is replayed, never trusted. Bump it on any change to states,
 * guards or context, and add a persisted-snapshot fixture for the new version under
 * test/fixtures/machines/.
 */
export const TASK_MACHINE_VERSION = 3;

function generationOf(event: TaskEvent): number | undefined {
  return 'generation' in event ? event.generation : undefined;
}

/** What moved under the event's Context (the kernel re-validated its read set); empty when nothing did. */
function staleOf(event: TaskEvent): StaleSource[] {
  return ('stale' in event && event.stale) || [];
}

const short = (value: string) => (value.startsWith('sha256:') ? value.slice(0, 19) : value);

/** `spec sha256:ab… → sha256:cd…; catalog (via spec)`: each moved source, for the reader. */
function describeStale(stale: readonly StaleSource[]): string {
  return stale
    .map((s) =>
      s.via !== undefined
        ? `${s.sourceId} (depends on ${s.via})`
        : `${s.sourceId} bound ${short(s.bound)}, now ${s.current === null ? 'gone' : short(s.current)}`,
    )
    .join('; ');
}

/** Why a decision was retained without being acted on, for the reader. */
function decisionDetail(
  context: TaskContext,
  event: Extract<TaskEvent, { type: 'decision.submit' }>,
  reason: RejectionReason,
): string | undefined {
  const named = short(event.contextDigest);
  if (reason === 'context_mismatch') return `${named} is not a Context of this Task`;
  if (reason === 'superseded')
    return context.decision?.contextDigest === event.contextDigest
      ? `Context ${named} was already decided (${context.decision.candidateId})`
      : `Context ${named} was left; the current one is ${context.contextDigest ? short(context.contextDigest) : 'none'}`;
  if (reason === 'candidate_unknown') return `no candidate ${event.candidateId} in Context ${named}`;
  if (reason === 'untrusted_authority')
    return `candidate ${event.candidateId} is not supported by trusted sources only`;
  return undefined;
}

/** Required artifacts not held as evidence, or held with another digest than the proposal names. */
export function missingEvidence(context: TaskContext, claimed: Record<string, string>): string[] {
  return context.requiredArtifacts.filter((name) => {
    const held = context.evidence[name];
    if (!held) return true;
    const digest = claimed[name];
    return digest !== undefined && digest !== held.digest;
  });
}

/** What was missing, mismatched or moved, for the reader (undefined when the code says it all). */
function rejectionDetail(context: TaskContext, event: TaskEvent, reason: RejectionReason): string | undefined {
  const generation = generationOf(event) ?? context.generation;
  if (reason === 'context_stale') return describeStale(staleOf(event));
  if (event.type === 'decision.submit') return decisionDetail(context, event, reason);
  if (reason === 'missing_artifact' && event.type === 'completion.propose')
    return `missing ${missingEvidence(context, event.evidence).join(', ')}`;
  if (reason === 'context_mismatch' && 'contextDigest' in event)
    return `event names ${event.contextDigest}; current Context is ${context.contextDigest ?? 'none'}`;
  if (reason === 'stale_assignment') return `generation ${generation} < current ${context.generation}`;
  if (reason === 'identity_conflict' && event.type === 'dispatch.reconcile')
    return `${event.jobIds.length} jobs claim ${event.clientRequestId}`;
  if (reason === 'action_failed' && event.type === 'action.record')
    return `${event.candidateId}: exit ${event.exitCode ?? 'none'}`;
  return undefined;
}

function rejection(context: TaskContext, event: TaskEvent, reason: RejectionReason): Rejection {
  const generation = generationOf(event) ?? context.generation;
  const detail = rejectionDetail(context, event, reason);
  return detail === undefined
    ? { event: event.type, reason, generation, revision: event.revision }
    : { event: event.type, reason, generation, revision: event.revision, detail };
}

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
 * invented candidate or one without trusted authority leaves the Task waiting with nothing done;
 * a moved read set makes the Assignment stale; otherwise the Host acts on the candidate.
 */
const DECISION = [
  { guard: not('contextKnown'), actions: 'rejectContext' },
  { guard: or([not('contextMatches'), 'decided']), actions: 'rejectSuperseded' },
  { guard: not('candidateKnown'), target: '#task.waiting', actions: 'rejectCandidate' },
  { guard: 'stale', target: '#task.stale', actions: 'rejectStaleContext' },
  { guard: not('trustedAuthority'), target: '#task.waiting', actions: 'rejectAuthority' },
  { target: '#task.acting', actions: 'decide' },
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
 * The Task statechart (DESIGN §4). Pure: guards decide admission, `assign` records what was
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
    actionOk: ({ event }) => event.type === 'action.record' && event.ok,
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
    create: assign(({ event }) => {
      assertEvent(event, 'task.created');
      return {
        taskId: event.taskId,
        attempt: event.attempt,
        specDigest: event.specDigest,
        requiredArtifacts: [...event.requiredArtifacts].sort(),
      };
    }),
    commitAssignment: assign(({ event }) => {
      assertEvent(event, 'assignment.commit');
      const { generation, harness, purpose, assignmentDigest } = event;
      return {
        generation,
        assignment: { generation, harness, purpose, digest: assignmentDigest },
        contextDigest: null,
        promptDigest: null,
        dispatch: null,
        proposal: null,
        decision: null,
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
  },
  states: {
    new: {
      on: { 'task.created': { guard: 'fromHost', target: 'open', actions: 'create' } },
    },
    open: {
      on: { 'assignment.commit': { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' } },
    },
    assigned: {
      initial: 'compiling',
      on: {
        // Replacement: a new generation fences everything the previous Assignment still has in flight.
        'assignment.commit': {
          guard: 'nextGeneration',
          target: 'assigned',
          reenter: true,
          actions: 'commitAssignment',
        },
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
        'assignment.commit': { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
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
        'assignment.commit': { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
        'decision.submit': DECISION,
      },
    },
    /** The Host performs the admitted candidate's action (frontier `act`); the provider only chose it. */
    acting: {
      on: {
        'assignment.commit': { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
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
     * A trusted source the Assignment's Context read moved before its work was admitted: the Host
     * commits the next generation for the same stage (frontier `rerun`), compiled at the current revision.
     */
    stale: {
      on: {
        'assignment.commit': { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' },
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
