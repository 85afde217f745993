import type { FrontierWork } from '../machines/index.js';
import type { EventRecord } from '../store/index.js';
import type { QueuedRun } from '../kernel/index.js';
import { taskProvenance } from './task-contexts.js';
import { taskEffects } from './task-effects.js';
import { taskGrants, taskRequests } from './task-requests.js';
import { LatestRejection, taskRuns } from './task-runs.js';
import { taskBranch, type ChildLookup } from './task-branch.js';
import type { BranchState } from '../machines/index.js';

/** One Task as `show` and `GET /tasks/:id` read it: its projection's fields, its events and its objects. */
export interface TaskShowSource<C extends { lastRejection?: unknown; requests?: unknown; branch?: unknown }> {
  taskId: string;
  revision: number;
  state: string;
  frontier: FrontierWork;
  title: string;
  context: C;
  events: ReadonlyArray<{ revision: number } & EventRecord>;
  /** An object's body by digest. */
  object: (digest: string) => unknown;
  /** A run receipt's body by digest (default `object`). */
  receipt?: (digest: string) => unknown;
  /** With a cluster: the Host holding the Task's lease, and whether that is another Host. */
  served?: { servedBy: string | null; elsewhere: boolean };
  /** Where the Task stands while its dispatch waits for a run slot of the Host serving it (default null: not queued). */
  queued?: QueuedRun | null | undefined;
  /** Whether the view carries every event too. */
  withEvents: boolean;
  /** A branch's child Task as it is now (its state and generation), for the branch's tree. */
  child?: ChildLookup;
}

/**
 * The Task view `ordivon show` prints and the control API's `GET /tasks/:id` answers: state,
 * frontier and context, each Context with its items, each rejection with its cause, each provider
 * run, each Effect receipt with its evidence files, DecisionRequests and grants (and the events
 * when asked). One read of the stream serves all
 * of them.
 */
export function taskShowView<C extends { lastRejection?: unknown; requests?: unknown; branch?: unknown }>(
  source: TaskShowSource<C>,
) {
  const { taskId, revision, state, frontier, title, served, context, events, object } = source;
  const { contexts, rejections } = taskProvenance(
    { events, object },
    LatestRejection.safeParse(context.lastRejection).data,
  );
  return {
    taskId,
    revision,
    state,
    frontier,
    title,
    queued: source.queued ?? null,
    ...(served ?? {}),
    context,
    contexts,
    // A rejection's code is `code` here, as in every other answer of the CLI and the API
    // (`TaskRejection.reason` and the statechart's `lastRejection.reason` keep their stored name).
    rejections: rejections.map(({ reason, ...rest }) => ({ ...rest, code: reason })),
    runs: taskRuns({ events, object: source.receipt ?? object }),
    effects: taskEffects({ events, object }),
    requests: taskRequests({ events, object }, context.requests),
    grants: taskGrants({ object }, context.requests),
    // A branch stage's children with why each won or lost (null for a Task without one).
    branch: taskBranch(context.branch as BranchState | null | undefined, events, source.child),
    ...(source.withEvents ? { events } : {}),
  };
}
