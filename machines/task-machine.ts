import { and, not, or, setup, type SnapshotFrom } from 'xstate';
import type { TaskEvent } from './task-events.js';
import { EMPTY_TASK_CONTEXT, type TaskContext } from './task-context.js';
import { TASK_ACTIONS } from './task-actions.js';
import { TASK_GUARDS } from './task-guards.js';
import {
  ANSWER_REFUSALS,
  AUTHORITY_ANSWER,
  DECISION,
  EFFECT_CONFLICT,
  EFFECT_RECONCILE,
  EVALUATED_DECISION,
  UNKNOWN_HARNESS,
} from './task-transitions.js';

/**
 * Version of the statechart's shape and semantics. Stored with every projection; a stored
 * projection of another version is replayed, never trusted. Bump it on any change to states,
 * guards (task-guards.ts), actions (task-actions.ts), shared transitions
 * (task-transitions.ts) or context, and add a persisted-snapshot fixture for the new version under
 * test/fixtures/machines/.
 */
export const TASK_MACHINE_VERSION = 7;

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
  guards: TASK_GUARDS,
  actions: TASK_ACTIONS,
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
        // Re-checked before the intent: a moved target reruns the stage, a changed endpoint waits.
        'effect.refuse': [
          {
            guard: and(['fromHost', 'currentGeneration', 'refusesStale']),
            target: 'stale',
            actions: 'rejectStaleContext',
          },
          { guard: and(['fromHost', 'currentGeneration']), target: 'waiting', actions: 'rejectEndpointChanged' },
        ],
        // A `reconcile` candidate: the Host looked the unknown Effect up by its request id.
        'effect.reconcile': EFFECT_RECONCILE,
        'effect.conflict': EFFECT_CONFLICT,
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
        'effect.conflict': EFFECT_CONFLICT,
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
        checking: { on: { 'effect.reconcile': EFFECT_RECONCILE, 'effect.conflict': EFFECT_CONFLICT } },
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
