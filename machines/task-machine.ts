import { and, assertEvent, assign, not, setup, type SnapshotFrom } from 'xstate';
import type { TaskEvent } from './task-events.js';
import { EMPTY_TASK_CONTEXT, type Rejection, type RejectionReason, type TaskContext } from './task-context.js';

/**
 * Version of the statechart's shape and semantics. Stored with every projection; a stored
 * projection of another version is replayed, never trusted. Bump it on any change to states,
 * guards or context, and add a persisted-snapshot fixture for the new version under
 * test/fixtures/machines/.
 */
export const TASK_MACHINE_VERSION = 2;

function generationOf(event: TaskEvent): number | undefined {
  return 'generation' in event ? event.generation : undefined;
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

function rejection(context: TaskContext, event: TaskEvent, reason: RejectionReason): Rejection {
  const generation = generationOf(event) ?? context.generation;
  let detail: string | undefined;
  if (reason === 'missing_artifact' && event.type === 'completion.propose') {
    detail = `missing ${missingEvidence(context, event.evidence).join(', ')}`;
  } else if (reason === 'context_mismatch' && 'contextDigest' in event) {
    detail = `event names ${event.contextDigest}; current Context is ${context.contextDigest ?? 'none'}`;
  } else if (reason === 'stale_assignment') {
    detail = `generation ${generation} < current ${context.generation}`;
  } else if (reason === 'identity_conflict' && event.type === 'dispatch.reconcile') {
    detail = `${event.jobIds.length} jobs claim ${event.clientRequestId}`;
  }
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
  },
  actions: {
    rejectStale: reject('stale_assignment'),
    rejectMissing: reject('missing_artifact'),
    rejectContext: reject('context_mismatch'),
    rejectIdentity: reject('identity_conflict'),
    rejectVerification: reject('verification_failed'),
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
        dispatch: null,
        proposal: null,
      };
    }),
    compileContext: assign(({ event }) => {
      assertEvent(event, 'context.compile');
      return { contextDigest: event.contextDigest };
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
          { guard: and(['currentGeneration', 'evidenceComplete']), target: 'verifying', actions: 'propose' },
          { guard: 'currentGeneration', target: 'waiting', actions: 'rejectMissing' },
        ],
      },
    },
    waiting: {
      on: { 'assignment.commit': { guard: 'nextGeneration', target: 'assigned', actions: 'commitAssignment' } },
    },
    verifying: {
      on: {
        'verification.record': [
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
