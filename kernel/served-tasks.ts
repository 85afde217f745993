import type { InspectionEvent } from 'xstate';
import { TaskSpec } from '../objects/index.js';
import { rebuildTask } from '../recovery/index.js';
import type { EventStore } from '../store/index.js';
import type { Clock } from './clock.js';
import type { Cluster } from './cluster/cluster.js';
import { HostError } from './errors.js';
import { kernelSourceReader, type ObservationReader } from '../readsets/index.js';
import type { TaskView } from './supervisor-options.js';
import { TaskActor, type Committed, type TaskSnapshot } from './task-actor.js';

/** What the Supervisor gives the Tasks it serves. */
export interface ServedTasksDeps {
  /** Where the Task Attempts' workspaces are (`SupervisorOptions.workspaces`): admission reads `workspace` sources there. */
  workspaces: string;
  clock: Clock;
  store: () => EventStore | undefined;
  cluster: () => Cluster | undefined;
  inspect: ((event: InspectionEvent) => void) | undefined;
  harnesses: readonly string[] | undefined;
  /** Re-reads an Effect's observation at a decision's admission (the frontier runner's; none on a bare supervisor). */
  readObservation: ObservationReader | undefined;
  /** Hears each commit of a served Task, after it is durable. */
  committed: (committed: Committed) => void;
  /** Told when a Task stops being served here, before its actor stops. */
  lost: (taskId: string) => void;
}

/** The Tasks a Supervisor serves: one actor and spec each, from `track` until `lose` (or the end). */
export class ServedTasks {
  readonly tasks = new Map<string, TaskActor>();
  readonly specs = new Map<string, TaskSpec>();

  constructor(private readonly deps: ServedTasksDeps) {}

  /** Keeps a Task actor (and its spec) for the Task at `revision`, its commits reported to `committed`. */
  track(taskId: string, snapshot: TaskSnapshot, revision: number, spec: TaskSpec): TaskActor {
    const { workspaces, clock, inspect, harnesses, readObservation, cluster } = this.deps;
    const onCommit = (c: Committed) => this.deps.committed(c);
    const task = new TaskActor(
      { taskId, snapshot, revision, store: this.deps.store()!, clock, onCommit },
      {
        inspect,
        spec,
        // The kernel's own reader, not the frontier runner's: admission is the same however the Host is opened.
        readSource: (location, context) => kernelSourceReader(workspaces, { taskId, spec, context })(location),
        harnesses,
        readObservation,
        onStoreRefusal: (code) => {
          const joined = cluster();
          if (!joined) return;
          // Another Host holds the Task now; or the write's outcome is unknown, so the mirror may
          // lag the authority: serve it again only once copied anew.
          if (code === 'lease_lost') this.lose(taskId);
          if (code === 'storage_failed') {
            this.lose(taskId);
            joined.markForReload(taskId);
          }
        },
      },
    );
    this.tasks.set(taskId, task);
    this.specs.set(taskId, spec);
    return task;
  }

  /** Rebuilds a Task from its events in `store` and serves it (another Host's Task this one took over); throws the first finding when it cannot be rebuilt. */
  adopt(store: EventStore, taskId: string): TaskActor {
    const { task, findings } = rebuildTask(store, taskId);
    if (!task) throw new HostError(findings[0]?.code ?? 'boot_failed', findings[0]?.message ?? `task ${taskId}`);
    const spec = task.spec ?? TaskSpec.parse(store.getObject(task.snapshot.context.specDigest!, 'task-spec').body);
    return this.track(taskId, task.snapshot, task.revision, spec);
  }

  /** Stops serving a Task (another Host took it, or it is to be copied again). The shared history keeps the leases. */
  lose(taskId: string): void {
    const task = this.tasks.get(taskId);
    if (!task) return;
    this.tasks.delete(taskId);
    this.specs.delete(taskId);
    this.deps.lost(taskId);
    task.stop();
  }

  /** A served Task as of its last commit; undefined for any other id. */
  view(taskId: string): TaskView | undefined {
    const task = this.tasks.get(taskId);
    if (!task) return undefined;
    const { revision, state, frontier, context } = task;
    return { taskId, revision, state, frontier, context, spec: this.specs.get(taskId)! };
  }

  /** Every served Task, with its generation and title. */
  list(): Array<Omit<TaskView, 'context' | 'spec'> & { generation: number; title: string }> {
    return [...this.tasks.values()].map((t) => ({
      taskId: t.taskId,
      revision: t.revision,
      state: t.state,
      frontier: t.frontier,
      generation: t.context.generation,
      title: this.specs.get(t.taskId)?.title ?? '',
    }));
  }
}
