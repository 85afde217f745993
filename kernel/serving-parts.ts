import type { EventStore } from '../store/index.js';
import { CheckpointScheduler } from './checkpoint-scheduler.js';
import type { Cluster, ClusterHooks } from './cluster/cluster.js';
import type { RemoteCommits } from './cluster/remote-commits.js';
import type { Clock } from './clock.js';
import { CommitListeners } from './commit-listeners.js';
import { HostError } from './errors.js';
import { FrontierScheduler } from './frontier-scheduler.js';
import { RequestDeadlines } from './requests/request-deadlines.js';
import { ServedTasks } from './served-tasks.js';
import { workspacesOf } from '../readsets/index.js';
import { DEFAULT_CHECKPOINT_EVERY, type SupervisorOptions } from './supervisor-options.js';
import type { Committed } from './task-actor.js';

/** What the Supervisor lends its serving parts: its options and what its lifecycle opens and closes. */
export interface ServingHost {
  root: string;
  clock: Clock;
  options: SupervisorOptions;
  /** Whether the Supervisor is serving (its statechart says `serving`). */
  serving: () => boolean;
  store: () => EventStore | undefined;
  cluster: () => Cluster | undefined;
  remote: () => RemoteCommits | undefined;
}

/**
 * The parts of a Supervisor that hear every commit: the Tasks it serves, its subscribers, its
 * FrontierScheduler, CheckpointScheduler and request deadlines. Each commit goes to the
 * subscribers first, then to the schedulers; with a cluster, other Hosts' commits go to the
 * subscribers and lease changes to the served Tasks (`clusterHooks`).
 */
export class ServingParts {
  readonly served: ServedTasks;
  readonly listeners = new CommitListeners();
  readonly frontier: FrontierScheduler;
  readonly checkpointer: CheckpointScheduler;
  readonly deadlines: RequestDeadlines;

  constructor(private readonly host: ServingHost) {
    const { root, clock, options, store } = host;
    this.served = new ServedTasks({
      workspaces: options.workspaces ?? workspacesOf(root),
      clock,
      store,
      cluster: host.cluster,
      inspect: options.inspect,
      harnesses: options.frontier?.harnesses,
      readObservation: options.frontier?.readObservation,
      committed: (c) => this.committed(c),
      lost: (taskId) => {
        this.frontier.abort(taskId, new HostError('lease_lost', `task ${taskId} is no longer served by this Host`));
        this.deadlines.forget(taskId);
      },
    });
    this.frontier = new FrontierScheduler({
      frontier: options.frontier,
      serving: host.serving,
      store,
      specs: this.served.specs,
      clock,
      retry: options.frontierRetry,
      limits: options.concurrency,
      tasks: this.served.tasks,
    });
    this.checkpointer = new CheckpointScheduler({
      every: options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY,
      store,
      specs: this.served.specs,
    });
    this.deadlines = new RequestDeadlines(clock);
  }

  /** What the cluster keeper calls: whether a Task is served here, one lost or adopted, other Hosts' commits. */
  clusterHooks(): ClusterHooks {
    return {
      serves: (taskId) => this.served.tasks.has(taskId),
      lost: (taskId) => this.served.lose(taskId),
      adopt: async (taskId) => {
        if (!this.host.serving()) return;
        const actor = this.served.adopt(this.host.store()!, taskId);
        await this.frontier.reconcile([actor]);
        await this.deadlines.boot([actor]);
        this.frontier.kick(actor);
      },
      // Nobody asking for a Task's commits: they are neither read nor replayed here. A subscriber
      // asking later hears commits from then on (RemoteCommits replays across the gap).
      wantsCommits: (taskId) => this.listeners.wantsRemote(taskId),
      wantsAnyCommits: () => this.listeners.wantsAnyRemote(),
      commits: async (commits) => {
        const remote = this.host.remote();
        if (!this.host.serving() || !remote || !this.listeners.wantsRemote(commits.taskId)) return;
        for (const committed of await remote.committedOf(commits)) this.listeners.tellRemote(committed);
      },
    };
  }

  private committed(committed: Committed): void {
    const remote = this.host.remote();
    if (remote) {
      remote.reportedHere(committed.taskId, committed.revision);
      this.listeners.tell({ ...committed, host: this.host.cluster()!.hostId });
    } else this.listeners.tell(committed);
    const task = this.served.tasks.get(committed.taskId);
    if (!task) return;
    this.frontier.committed(task);
    this.checkpointer.committed(committed, task);
    this.deadlines.committed(task);
  }
}
