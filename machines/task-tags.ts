/**
 * What the Host must do next for a Task in a given state. Derived from the state alone, so
 * recovery resumes pending work idempotently instead of replaying effects. Each state with work
 * carries it as its `work:<FrontierWork>` tag (task-machine.ts); a state without one has `none`.
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
  | 'join' // assigned.branching: create the branch's children, observe their ends, commit the join
  | 'none'; // open, waiting, effect_unknown.held, authorizing.held, blocked, completed, cancelled: nothing until an event arrives

/**
 * The Task statechart's tags, what the Host owes in a state: `work:<FrontierWork>` for the one
 * piece of frontier work, `resting` for a state that waits for an event (or, final, for none).
 */
export type TaskTag = `work:${Exclude<FrontierWork, 'none'>}` | 'resting';

const WORK_PREFIX = 'work:';

/** The frontier work a tag names, or undefined for a tag that names none (`resting`). */
export function workOfTag(tag: string): Exclude<FrontierWork, 'none'> | undefined {
  return tag.startsWith(WORK_PREFIX) ? (tag.slice(WORK_PREFIX.length) as Exclude<FrontierWork, 'none'>) : undefined;
}
