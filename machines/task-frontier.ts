import type { StateValue } from 'xstate';

/**
 * What the Host must do next for a Task in a given state. Derived from the state alone, so
 * recovery resumes pending work idempotently instead of replaying effects.
 */
export type FrontierWork =
  | 'compile_context' // assigned.compiling: compile and commit the Context before the provider runs
  | 'dispatch' // assigned.ready: persist the intent, then call the Runtime
  | 'confirm_dispatch' // assigned.dispatching: intent durable, response not yet recorded; look the job up
  | 'reconcile' // assigned.unknown: find the job by its exact clientRequestId
  | 'observe_run' // assigned.running: observe the job to terminal
  | 'evaluate' // evaluating: validate the run's artifacts, propose completion or settle
  | 'verify' // verifying: run independent acceptance verification
  | 'act' // acting: perform the admitted decision's candidate action
  | 'rerun' // stale: the Context moved under the Assignment; commit the next generation for the same stage
  | 'confirm_effect' // effecting: intent durable, answer not recorded; the Effect is unknown
  | 'reconcile_effect' // effect_unknown.checking: look the Effect up by its exact request id
  | 'escalate_effect' // effect_unknown.escalating: nothing found; open a DecisionRequest for an operator
  | 'escalate_authority' // authorizing.escalating: ask a person about a candidate whose authority is not trusted
  | 'none'; // open, waiting, effect_unknown.held, authorizing.held, blocked, completed, cancelled: nothing until an event arrives

/** Dotted name of a Task state value, e.g. `assigned.ready`. */
export function stateName(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [key, child] = Object.entries(value)[0] ?? ['', ''];
  return child === undefined ? key : `${key}.${stateName(child as StateValue)}`;
}

const FRONTIER: Record<string, FrontierWork> = {
  'assigned.compiling': 'compile_context',
  'assigned.ready': 'dispatch',
  'assigned.dispatching': 'confirm_dispatch',
  'assigned.unknown': 'reconcile',
  'assigned.running': 'observe_run',
  evaluating: 'evaluate',
  verifying: 'verify',
  acting: 'act',
  stale: 'rerun',
  effecting: 'confirm_effect',
  'effect_unknown.checking': 'reconcile_effect',
  'effect_unknown.escalating': 'escalate_effect',
  'authorizing.escalating': 'escalate_authority',
};

export function taskFrontier(value: StateValue): FrontierWork {
  return FRONTIER[stateName(value)] ?? 'none';
}

/** The state name and frontier of a Task's (persisted) snapshot: a finished actor has no work left. */
export function snapshotView(snapshot: { value?: unknown; status?: unknown }): {
  state: string;
  frontier: FrontierWork;
} {
  const value = snapshot.value as StateValue;
  return { state: stateName(value), frontier: snapshot.status === 'done' ? 'none' : taskFrontier(value) };
}

/**
 * States with no frontier work: the Task does nothing until an event arrives (a new Assignment,
 * an answer, a cancellation) or never again. What a caller waits for when it waits for a Task to
 * come to rest.
 */
export const RESTING_TASK_STATES: readonly string[] = [
  'open',
  'waiting',
  'effect_unknown.held',
  'authorizing.held',
  'blocked',
  'completed',
  'cancelled',
];

/** States in which a Task takes no further events. */
export const FINAL_TASK_STATES: readonly string[] = ['completed', 'cancelled'];

/** How the statechart took an event: admitted, or retained with the rejection it recorded. */
export type Disposition = { admitted: true } | { admitted: false; code: string };

/** Compares the context before and after a transition: one more rejection means the event was retained. */
export function classifyTransition(
  before: { rejected: number },
  after: { rejected: number; lastRejection: { reason: string } | null },
): Disposition {
  if (after.rejected > before.rejected && after.lastRejection)
    return { admitted: false, code: after.lastRejection.reason };
  return { admitted: true };
}
