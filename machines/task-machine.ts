import { setup, type SnapshotFrom } from 'xstate';
import type { TaskEvent } from './task-events.js';
import { EMPTY_TASK_CONTEXT, type TaskMachineContext } from './task-context.js';
import { TASK_ACTIONS } from './task-actions.js';
import { TASK_GUARDS, and, not, or } from './task-guards.js';
import type { TaskTag } from './task-tags.js';
import {
  ANSWER_REFUSALS,
  AUTHORITY_ANSWER,
  DECISION,
  EFFECT_CONFLICT,
  EFFECT_RECONCILE,
  EVALUATED_DECISION,
  REASSIGN,
  UNKNOWN_HARNESS,
} from './task-transitions.js';

/**
 * Version of the statechart's shape and semantics. Stored with every projection; a stored
 * projection of another version is replayed, never trusted. Bump it on any change to states,
 * guards (task-guards.ts), actions (task-actions.ts), shared transitions
 * (task-transitions.ts) or context, and add a persisted-snapshot fixture for the new version under
 * test/fixtures/machines/.
 */
export const TASK_MACHINE_VERSION = 8;

/**
 * The Task statechart (docs/design.md, "The statechart"). Pure: guards decide admission, `assign` records what was
 * admitted, and nothing else runs. What the Host must do next (compile a Context, dispatch,
 * reconcile, verify) is the state's own tag (`work:<FrontierWork>`, or `resting`), read by
 * `taskFrontier`, never derived from replayed actions. Every leaf state but `new` (left at
 * creation) carries exactly one.
 *
 * Host-only events check no origin here: the kernel refuses them from outside before the machine
 * sees them (`not_allowed`). `fromHost` guards only `decision.submit`, which both may send.
 *
 * Events that the current state cannot take have no enabled transition (`snapshot.can(e)` is
 * false); the kernel refuses them without writing. Events that are taken but rejected
 * (stale generation, missing evidence, Context mismatch) are retained: they are appended and
 * their rejection is counted in `context.rejected`, the latest kept in `context.lastRejection`
 * (the journal holds every one, each event with its disposition).
 */
export const taskMachine = setup({
  types: {} as { context: TaskMachineContext; events: TaskEvent; tags: TaskTag },
  guards: TASK_GUARDS,
  actions: TASK_ACTIONS,
}).createMachine({
  id: 'task',
  context: EMPTY_TASK_CONTEXT,
  initial: 'new',
  on: {
    // Retained, never acted upon: proposals and results of an earlier Assignment generation.
    'completion.propose': { guard: 'staleGeneration', actions: 'rejectStale' },
    'run.observe': { guard: 'staleGeneration', actions: 'rejectStale' },
    'verification.record': { guard: 'staleGeneration', actions: 'rejectStale' },
    // Elsewhere a decision is retained only when it can never be taken; one on the current, undecided
    // Context arriving before its stage is evaluated is refused (invalid_transition) without a write.
    'decision.submit': [
      { guard: not('contextKnown'), actions: 'rejectContext' },
      { guard: or([not('contextMatches'), 'decided']), actions: 'rejectSuperseded' },
    ],
    // The Goal moves under in-flight work; whatever was made against the old one is stale at admission.
    'goal.revise': { actions: 'reviseGoal' },
    'task.cancel': { target: '.cancelled', actions: 'cancel' },
    // A child's end after its branch was joined (or left by a new Assignment): retained, never taken.
    'branch.observe': [
      { guard: and(['sameBranch', 'childOpen']), actions: ['observeChild', 'rejectSuperseded'] },
      { actions: 'rejectSuperseded' },
    ],
    // An operator's word to a Loop v0 run: the model reads it at its next turn boundary.
    'task.steer': { actions: 'steer' },
    // DecisionRequests live beside the lifecycle: opened by the Host, answered from outside, expired
    // at their deadline, revoked when what they were bound to moved.
    'request.open': { guard: 'requestNew', actions: 'openRequest' },
    'request.answer': [...ANSWER_REFUSALS, { actions: 'answerRequest' }],
    'request.expire': { guard: and(['requestPending', 'requestExpired']), actions: 'expireRequest' },
    'request.revoke': { guard: 'requestPending', actions: 'revokeRequest' },
  },
  states: {
    new: {
      on: { 'task.created': { target: 'open', actions: 'create' } },
    },
    open: {
      tags: ['resting'],
      on: { 'assignment.commit': REASSIGN },
    },
    assigned: {
      initial: 'compiling',
      on: {
        // Replacement: a new generation fences everything the previous Assignment still has in flight.
        // As REASSIGN, but re-entering: the one state whose new Assignment targets itself.
        'assignment.commit': [
          UNKNOWN_HARNESS,
          { guard: 'nextGeneration', target: 'assigned', reenter: true, actions: 'commitAssignment' },
        ],
      },
      states: {
        compiling: {
          tags: ['work:compile_context'],
          on: {
            'context.compile': {
              guard: 'currentGeneration',
              target: 'ready',
              actions: 'compileContext',
            },
          },
        },
        ready: {
          tags: ['work:dispatch'],
          on: {
            'dispatch.intend': {
              guard: 'currentGeneration',
              target: 'dispatching',
              actions: 'intendDispatch',
            },
            // A branch stage fans out instead of dispatching one run (docs/branch-and-join.md).
            'branch.open': {
              guard: and(['currentGeneration', 'branchNew']),
              target: 'branching',
              actions: 'openBranch',
            },
          },
        },
        /**
         * A branch stage's children run as Tasks of their own (frontier `join`: create them, observe
         * their ends, merge the winners' work into this Task's workspace, commit the join once).
         * The join is evaluated as a run is: its evidence is the stage's artifacts the merge brought.
         */
        branching: {
          tags: ['work:join'],
          on: {
            'branch.observe': [
              { guard: and(['currentGeneration', 'sameBranch', 'childOpen']), actions: 'observeChild' },
              { actions: 'rejectSuperseded' },
            ],
            'branch.join': [
              {
                guard: and(['currentGeneration', 'sameBranch', 'winnersVerified']),
                target: '#task.evaluating',
                actions: 'joinBranch',
              },
              {
                guard: and(['currentGeneration', 'sameBranch']),
                target: '#task.waiting',
                actions: ['joinBranch', 'rejectJoin'],
              },
            ],
          },
        },
        dispatching: {
          tags: ['work:confirm_dispatch'],
          on: {
            'dispatch.ack': { guard: 'sameRequest', target: 'running', actions: 'acknowledge' },
            'dispatch.lost': { guard: 'sameRequest', target: 'unknown', actions: 'loseDispatch' },
          },
        },
        unknown: {
          tags: ['work:reconcile'],
          on: {
            // No job found: no transition, the dispatch stays unknown (never redispatched blindly).
            'dispatch.reconcile': [
              { guard: and(['sameRequest', 'oneJob']), target: 'running', actions: 'acknowledge' },
              {
                guard: and(['sameRequest', 'manyJobs']),
                target: '#task.blocked',
                actions: 'rejectIdentity',
              },
            ],
          },
        },
        running: {
          tags: ['work:observe_run'],
          on: {
            'run.observe': [
              {
                guard: and(['currentGeneration', 'sameRequest', not('contextMatches')]),
                actions: 'rejectContext',
              },
              {
                guard: and(['currentGeneration', 'sameRequest', 'stale']),
                target: '#task.stale',
                actions: 'rejectStaleContext',
              },
              {
                guard: and(['currentGeneration', 'sameRequest']),
                target: '#task.evaluating',
                actions: 'observeRun',
              },
            ],
          },
        },
      },
    },
    evaluating: {
      tags: ['work:evaluate'],
      on: {
        'assignment.commit': REASSIGN,
        'evaluation.settle': { guard: 'currentGeneration', target: 'waiting' },
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
      tags: ['resting'],
      on: {
        'assignment.commit': REASSIGN,
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
      on: { 'assignment.commit': REASSIGN },
      states: {
        escalating: {
          tags: ['work:escalate_authority'],
          on: { 'request.open': { guard: 'requestNew', target: 'held', actions: 'openRequest' } },
        },
        held: {
          tags: ['resting'],
          on: {
            'request.answer': AUTHORITY_ANSWER,
            'request.expire': [
              {
                guard: and(['authorityRequest', 'requestPending', 'requestExpired']),
                target: '#task.waiting',
                actions: ['expireRequest', 'dropAsked'],
              },
              { guard: and(['requestPending', 'requestExpired']), actions: 'expireRequest' },
            ],
            'request.revoke': [
              {
                guard: and(['authorityRequest', 'requestPending']),
                target: '#task.waiting',
                actions: ['revokeRequest', 'dropAsked'],
              },
              { guard: 'requestPending', actions: 'revokeRequest' },
            ],
          },
        },
      },
    },
    /** The Host performs the admitted candidate's action (frontier `act`); the provider only chose it. */
    acting: {
      tags: ['work:act'],
      on: {
        'assignment.commit': REASSIGN,
        // An Effect: its intent (request id, operation, target, input digest) is durable before the adapter is called.
        'effect.intend': {
          guard: 'currentGeneration',
          target: 'effecting',
          actions: 'intendEffect',
        },
        // Re-checked before the intent: a moved target reruns the stage, a changed endpoint waits.
        'effect.refuse': [
          {
            guard: and(['currentGeneration', 'refusesStale']),
            target: 'stale',
            actions: 'rejectStaleContext',
          },
          { guard: 'currentGeneration', target: 'waiting', actions: 'rejectEndpointChanged' },
        ],
        // A `reconcile` candidate: the Host looked the unknown Effect up by its request id.
        'effect.reconcile': EFFECT_RECONCILE,
        'effect.conflict': EFFECT_CONFLICT,
        'action.record': [
          { guard: and(['currentGeneration', 'actionOk']), target: 'evaluating', actions: 'recordAction' },
          {
            guard: 'currentGeneration',
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
      tags: ['work:confirm_effect'],
      on: {
        'effect.record': { guard: 'sameEffect', target: 'evaluating', actions: 'recordEffect' },
        'effect.conflict': EFFECT_CONFLICT,
        'effect.lost': [
          {
            guard: and(['sameEffect', 'reconcileByHost']),
            target: 'effect_unknown',
            actions: 'loseEffect',
          },
          { guard: 'sameEffect', target: 'waiting', actions: 'loseEffect' },
        ],
        'effect.fail': {
          guard: 'sameEffect',
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
      on: { 'assignment.commit': REASSIGN },
      states: {
        checking: {
          tags: ['work:reconcile_effect'],
          on: { 'effect.reconcile': EFFECT_RECONCILE, 'effect.conflict': EFFECT_CONFLICT },
        },
        escalating: {
          tags: ['work:escalate_effect'],
          on: { 'request.open': { guard: 'requestNew', target: 'held', actions: 'openRequest' } },
        },
        held: {
          tags: ['resting'],
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
      tags: ['work:rerun'],
      on: {
        'assignment.commit': REASSIGN,
        // The Host gave up rerunning (the Context kept moving): the Task waits for a new Assignment.
        'evaluation.settle': { guard: 'currentGeneration', target: 'waiting' },
      },
    },
    verifying: {
      tags: ['work:verify'],
      on: {
        'verification.record': [
          {
            guard: and(['currentGeneration', 'stale']),
            target: 'stale',
            actions: ['recordVerification', 'rejectStaleContext'],
          },
          {
            guard: and(['currentGeneration', 'passed']),
            target: 'completed',
            actions: ['recordVerification', 'commitOutcome'],
          },
          {
            guard: 'currentGeneration',
            target: 'waiting',
            actions: ['recordVerification', 'rejectVerification'],
          },
        ],
      },
    },
    /** Fail-closed: more than one Runtime job claims this Task's dispatch. Only cancellation leaves it. */
    blocked: { tags: ['resting'] },
    completed: { type: 'final', tags: ['resting'] },
    cancelled: { type: 'final', tags: ['resting'] },
  },
});

export type TaskMachine = typeof taskMachine;

/** A Task's machine snapshot (live: what an actor holds, a replay produces, a checkpoint restores). */
export type TaskSnapshot = SnapshotFrom<typeof taskMachine>;
