import { createActor, fromPromise, initialTransition, waitFor as waitForSnapshot, type Actor } from 'xstate';
import {
  supervisorMachine,
  taskMachine,
  type BootSummary,
  type SupervisorFailure,
  type TaskStateName,
} from '../machines/index.js';
import { resolveStateRoot, type EventRecord, type EventStore } from '../store/index.js';
import type { CheckpointStats } from './checkpoint-scheduler.js';
import type { PgHistory } from '../store/postgres/index.js';
import type { Cluster } from './cluster/cluster.js';
import { systemClock, type Clock } from './clock.js';
import { HostError, bootErrorOf } from './errors.js';
import { newTask, notCreated } from './new-task.js';
import type { TaskSpecInput } from '../objects/index.js';
import { openOperatorRequest, type OperatorRequestInput } from './requests/operator-requests.js';
import {
  checkSupervisorOptions,
  type ExternalEvent,
  type SendOptions,
  type SupervisorOptions,
  type TaskView,
} from './supervisor-options.js';
import { validateBoot } from './validate-boot.js';
import { waitForState, type StateSource } from './wait-for-state.js';
import type { RemoteCommits } from './cluster/remote-commits.js';
import { readElsewhere, readHere, type TaskReading } from './cluster/task-reading.js';
import type { Committed, SendResult, TaskActor } from './task-actor.js';
import type { SubscribeOptions } from './commit-listeners.js';
import { joinAndOpen } from './join-and-open.js';
import { sendOwnRetried } from './cluster/own-conflict.js';
import { ServingParts } from './serving-parts.js';
import { drainStages, type StageDrain } from './drain-stages.js';

export type {
  BootSummary,
  CheckpointStats,
  ExternalEvent,
  SendOptions,
  StageDrain,
  SupervisorOptions,
  TaskView,
  TaskReading,
};

/**
 * The Host's supervisor (docs/design.md, "The Supervisor"), embeddable in any Node service.
 *
 * `start()` opens the state root (taking its lock), rebuilds and checks every Task from its
 * events, reconciles unknown dispatches, and only then serves. `send` resolves with how the
 * Task took the event; it never throws for a refused event. `stop()` drains: no new events,
 * in-flight transitions commit, effects are aborted, the store is closed and the lock released.
 * Frontier work runs through a FrontierScheduler, checkpoints while serving through a
 * CheckpointScheduler; both hear of every commit after the subscribers.
 */
export class Supervisor {
  private store: EventStore | undefined;
  private readonly clock: Clock;
  /** The served Tasks, subscribers and schedulers, and where each commit goes. */
  private readonly parts: ServingParts;
  /** The state root directory, resolved (absolute). */
  readonly root: string;
  /** The supervisor statechart's live actor; `status` and `failure` are what it says. @internal */
  readonly actor: Actor<typeof supervisorMachine>;
  /** The error a lifecycle step failed with, as a HostError (what `start()` rejects with). */
  private failedWith: HostError | undefined;
  /** Membership of a cluster on PostgreSQL (`options.store`), from `open` to the end of `drain`. */
  private cluster: Cluster | undefined;
  /** With a cluster: other Hosts' commits as subscribers hear them. */
  private remote: RemoteCommits | undefined;
  /** Whether `start()` was called (the statechart says `booting` before as after). */
  private started = false;

  constructor(private readonly options: SupervisorOptions = {}) {
    checkSupervisorOptions(options);
    this.root = resolveStateRoot(options.state);
    this.clock = options.clock ?? systemClock;
    this.parts = new ServingParts({
      root: this.root,
      clock: this.clock,
      options,
      serving: () => this.status === 'serving',
      store: () => this.store,
      cluster: () => this.cluster,
      remote: () => this.remote,
    });
    const logic = supervisorMachine.provide({
      actors: {
        open: fromPromise(async () => this.step(() => this.open())),
        validate: fromPromise(async () => this.step(() => this.validate())),
        reconcile: fromPromise(async () => this.step(() => this.reconcile())),
        drain: fromPromise(async () => this.step(() => this.drain())),
      },
    });
    this.actor = createActor(logic, { id: 'supervisor', ...(options.inspect ? { inspect: options.inspect } : {}) });
  }

  /** Supervisor state: booting, validating, reconciling, serving, draining, stopped or failed. */
  get status(): string {
    return String(this.actor.getSnapshot().value);
  }

  /** What made the supervisor `failed` (its code, message and findings), or null. */
  get failure(): SupervisorFailure | null {
    return this.actor.getSnapshot().context.failure;
  }

  /** Boots and resolves once serving; rejects with a HostError carrying the failure code and findings. */
  async start(): Promise<void> {
    this.started = true;
    this.actor.start();
    const snapshot = await waitForSnapshot(this.actor, (s) => s.value === 'serving' || s.status === 'done');
    if (snapshot.value !== 'serving') {
      const failure = snapshot.context.failure;
      await this.store?.close().catch(() => undefined);
      this.store = undefined;
      throw this.failedWith ?? new HostError('boot_failed', failure?.message ?? 'supervisor did not start');
    }
    for (const task of this.parts.served.tasks.values()) this.parts.frontier.kick(task);
    await this.cluster?.start(() => this.store, this.parts.clusterHooks());
  }

  /**
   * Why this Host cannot reach the PostgreSQL history it shares, or null (always null on an
   * embedded store): its last lease renewal or keeper round failed, none has succeeded since.
   */
  databaseUnreachable(): { since: string; message: string } | null {
    return this.cluster?.unreachable() ?? null;
  }

  /** This Host's name among the Hosts sharing a PostgreSQL history (undefined on an embedded store). */
  get hostId(): string | undefined {
    return this.cluster?.hostId;
  }

  /** Tasks this Host holds on a shared history but could not serve yet, with why (empty on an embedded store). */
  clusterProblems(): Array<{ taskId: string; problem: string }> {
    return this.cluster?.problems() ?? [];
  }

  /**
   * The cluster's shared history on PostgreSQL, from the join in `start()` to the end of `stop()`;
   * undefined on an embedded store. @internal
   */
  get history(): PgHistory | undefined {
    return this.cluster?.history;
  }

  /**
   * One round of the cluster keeper now (renew leases, stop Tasks another Host took, claim and
   * adopt free ones), as its timer does every `renewEveryMs`, then one poll of the watch (other
   * Hosts' commits to subscribers), as its timer does every `pollMs`; resolves when both are over.
   * For tests and operators that moved leases by hand. A no-op on an embedded store. @internal
   */
  async clusterTick(): Promise<void> {
    await this.cluster?.tick(() => this.store, this.parts.clusterHooks());
    await this.cluster?.poll();
  }

  /**
   * Creates a Task from a spec and resolves once `task.created` is durable; throws `invalid_spec`
   * (with the field path) or `task_exists`, writing nothing, and `not_serving` unless serving.
   */
  async createTask(input: TaskSpecInput): Promise<{ taskId: string; revision: number }> {
    const { taskId, spec, created, attachments } = newTask(
      input,
      this.serving('createTask'),
      this.options.artifactContracts,
    );
    if (this.parts.served.tasks.has(taskId)) throw new HostError('task_exists', `task ${taskId} already exists`);
    const task = this.parts.served.track(taskId, initialTransition(taskMachine)[0], 0, spec);
    const result = await task.send(created, 'host', attachments);
    if (!result.written) {
      this.parts.served.tasks.delete(taskId);
      task.stop();
      throw notCreated(result);
    }
    return { taskId, revision: result.revision };
  }

  /**
   * Sends an event from outside the Host and resolves with how the Task took it; never throws for
   * a refused event (`admitted: false`, with `written` telling whether it was retained). The event
   * is parsed with zod as any input is (`invalid_event` with the field's `path`); a Host-only type
   * is refused `not_allowed`. Throws `not_serving` (retryable) unless the supervisor is serving.
   */
  send(taskId: string, event: ExternalEvent, options: SendOptions = {}): Promise<SendResult> {
    return this.sendRaw(taskId, event, options);
  }

  /**
   * `send` for a value not typed yet (a decoded JSON body, a CLI argument): the same parse and the
   * same answers, `invalid_event` or `not_allowed` for what is not an external event.
   */
  async sendRaw(taskId: string, event: unknown, options: SendOptions = {}): Promise<SendResult> {
    const store = this.serving('send');
    const withId =
      options.eventId && typeof event === 'object' && event !== null ? { ...event, eventId: options.eventId } : event;
    return sendOwnRetried(this.ownConflict(store), taskId, (task) => task.send(withId, 'external', {}));
  }

  /** A Task this Host serves, as of its last commit (with `queued` while it waits for a run slot); undefined for any other id. */
  getTask(taskId: string): TaskView | undefined {
    const view = this.parts.served.view(taskId);
    const queued = view && this.parts.frontier.queued().get(taskId);
    return queued ? { ...view!, queued } : view;
  }

  /** Every Task this Host serves, with its generation and title (and `queued` while it waits for a run slot). */
  listTasks(): Array<Omit<TaskView, 'context' | 'spec'> & { generation: number; title: string }> {
    const queued = this.parts.frontier.queued();
    return this.parts.served.list().map((row) => {
      const place = queued.get(row.taskId);
      return place ? { ...row, queued: place } : row;
    });
  }

  /** The stored events of a Task this Host serves, in revision order (`readTask` for any Task of a cluster). */
  events(taskId: string): Array<{ revision: number } & EventRecord> {
    return [...this.serving('events').stream(taskId)].map(({ revision, event }) => ({ revision, ...event }));
  }

  /**
   * A Task with its events and objects, wherever it is served: this Host's own Tasks as `getTask`,
   * `events` and `getObject` give them; with a cluster, a Task another Host serves read from the
   * shared history in one snapshot, `elsewhere` and read-only (a send answers `task_elsewhere`).
   * Undefined when there is no such Task; `storage_failed` when the database cannot be read.
   */
  async readTask(taskId: string): Promise<TaskReading | undefined> {
    const store = this.serving('readTask');
    const view = this.getTask(taskId);
    if (view) return readHere({ view, events: this.events(taskId), store, hostId: this.cluster?.hostId });
    return this.cluster ? readElsewhere(this.cluster.history, taskId) : undefined;
  }

  /**
   * Opens an `operator` DecisionRequest as the Host (`request.open` is never taken from `send`);
   * docs/decision-requests.md. Resolves with whether the request is (now) the Task's: true when
   * opened, or when the Task already has this very question under that id; false when the Task
   * takes no more events. Throws `task_not_found`, `invalid_request` or `request_exists` (another
   * question under an id the Task has), writing nothing.
   */
  async openRequest(taskId: string, input: OperatorRequestInput): Promise<boolean> {
    const store = this.serving('openRequest');
    const task = this.parts.served.tasks.get(taskId);
    if (!task) throw new HostError('task_not_found', `no task ${taskId}`);
    const result = await openOperatorRequest(
      { task, store, spec: this.parts.served.specs.get(taskId)!, clock: this.clock },
      input,
    );
    if (result.code === 'invalid_request' || result.code === 'request_exists')
      throw new HostError(result.code, result.detail ?? result.code, { path: result.path });
    return result.admitted;
  }

  /**
   * `openRequest` for a value not typed yet (a decoded JSON body, a CLI argument), answering as
   * `sendRaw` does: every refusal as data, nothing written for any (`invalid_request` with its
   * `path`, `request_exists`, `task_not_found` or, on a cluster, `task_elsewhere`, and the Task's
   * own refusal of `request.open`); the same question again is `duplicate`. Throws `not_serving`.
   */
  async openRequestRaw(taskId: string, input: unknown): Promise<SendResult> {
    const store = this.serving('openRequest');
    return sendOwnRetried(this.ownConflict(store), taskId, (task) =>
      openOperatorRequest({ task, store, spec: this.parts.served.specs.get(taskId)!, clock: this.clock }, input),
    );
  }

  /** Reads an immutable object (receipt, evidence, outcome, …) by digest, re-checked against its digest. */
  getObject<T = unknown>(digest: string): { kind: string; body: T } {
    return this.serving('getObject').getObject<T>(digest);
  }

  /** The live actor of a Task this Host serves (the `inspect` option observes it). @internal */
  taskActor(taskId: string): TaskActor | undefined {
    return this.parts.served.tasks.get(taskId);
  }

  /**
   * Listens to every commit, after it is durable; on a cluster, to other Hosts' commits as
   * `options.remote` asks (default all of them). Returns the unsubscribe function.
   */
  subscribe(listener: (committed: Committed) => void, options?: SubscribeOptions): () => void {
    return this.parts.listeners.add(listener, options);
  }

  /**
   * Resolves with the state once the Task reaches one of `states`; rejects if it reaches one of
   * `failOn` first, or the supervisor stops. Listens to commits; never polls. On a cluster, a Task
   * another Host serves is followed in the shared history: its state there now, then its commits.
   */
  waitFor(
    taskId: string,
    states: string[],
    failOn: string[] = ['cancelled', 'blocked'] satisfies TaskStateName[],
  ): Promise<string> {
    const cluster = this.cluster;
    const source: StateSource = {
      taskActor: (id) => this.taskActor(id),
      subscribe: (listener, options) => this.subscribe(listener, options),
      actor: this.actor,
      ...(cluster
        ? {
            stateElsewhere: async (id: string) => {
              const reading = await readElsewhere(cluster.history, id);
              return reading && { state: reading.view.state, revision: reading.view.revision };
            },
          }
        : {}),
    };
    return waitForState(source, taskId, states, failOn);
  }

  /**
   * Resolves once the checkpoints taken so far (see `checkpointEvery`) are written, or failed to
   * be, with the counts then: a checkpoint only ever shortens the next start, so nothing waits
   * for them but this and `stop()`.
   */
  async checkpointsWritten(): Promise<CheckpointStats> {
    await this.parts.checkpointer.written();
    return this.checkpoints();
  }

  /** What validation did at `start()` (null before it finished, or when it found damage: see `failure`). */
  bootReport(): BootSummary | null {
    const { boot, failure } = this.actor.getSnapshot().context;
    return boot && failure === null ? { ...boot } : null;
  }

  /** Checkpoints written and failed since `start()` (after boot, while serving, at stop), and those taken but not yet written. */
  checkpoints(): CheckpointStats {
    return this.parts.checkpointer.stats();
  }

  /**
   * The graceful part of a drain, before `stop()`: starts no new frontier work (no dispatch, no
   * next stage) and waits up to `timeoutMs` (on the Supervisor's clock) for the work in flight to
   * end; events are still taken meanwhile. Answers how many of the stages running at the start
   * ended on their own and how many were still running (`stop()` and the Runtime's `close()` then
   * stop those, recoverable: `drainStages`).
   */
  finishRunning({ timeoutMs }: { timeoutMs: number }): Promise<StageDrain> {
    return drainStages(this.parts.frontier, this.clock, timeoutMs);
  }

  /** Drains and stops. Safe to call more than once. */
  async stop(): Promise<void> {
    const snapshot = this.actor.getSnapshot();
    if (snapshot.status === 'done') return;
    const done = new Promise<void>((resolve) => {
      const sub = this.actor.subscribe({ complete: () => (sub.unsubscribe(), resolve()) });
    });
    this.actor.send({ type: 'stop' });
    await done;
  }

  // ---- lifecycle steps (provided to the supervisor statechart) --------------------------------

  /** Runs a step; what it throws becomes a HostError (`bootErrorOf`), kept for `start()` and the statechart's `failure`. */
  private async step<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      this.failedWith = bootErrorOf(error);
      throw this.failedWith;
    }
  }

  private async open(): Promise<void> {
    const { store, cluster, remote } = await joinAndOpen(this.root, this.options);
    this.store = store;
    this.cluster = cluster;
    this.remote = remote;
  }

  private async validate(): Promise<BootSummary> {
    const { summary, tasks } = await validateBoot(this.store!, {
      root: this.root,
      mode: this.options.recovery ?? 'checkpoint',
      clock: this.clock,
      progress: (progress) => this.actor.send({ type: 'progress', progress: { ...progress } }),
      listener: this.options.onBootProgress,
      checkpoints: this.parts.checkpointer,
    });
    for (const { taskId, snapshot, revision, spec } of tasks) this.parts.served.track(taskId, snapshot, revision, spec);
    return summary;
  }

  /** Before anything is served: unknown dispatches looked up by their clientRequestId, past deadlines expired. */
  private async reconcile(): Promise<{ reconciled: number }> {
    const reconciled = await this.parts.frontier.reconcile(this.parts.served.tasks.values());
    await this.parts.deadlines.boot(this.parts.served.tasks.values());
    return { reconciled };
  }

  private async drain(): Promise<void> {
    this.parts.deadlines.stop();
    this.parts.frontier.abortAll(new HostError('not_serving', 'supervisor is draining'));
    await Promise.all([...this.parts.served.tasks.values()].map((t) => t.settled()));
    await this.options.frontier?.close?.();
    await this.parts.checkpointer.stop(this.parts.served.tasks.values());
    for (const task of this.parts.served.tasks.values()) task.stop();
    await this.cluster?.leave();
    await this.store?.close();
    this.store = undefined;
  }

  // ---- internals --------------------------------------------------------------------------------

  /** What a send from outside needs to re-read a Task whose append its own stale copy made conflict. */
  private ownConflict(store: EventStore) {
    return { tasks: this.parts.served.tasks, cluster: this.cluster, store, hooks: this.parts.clusterHooks() };
  }

  /** The store while serving; else `not_serving`, saying what to do when `start()` was never called. */
  private serving(call: string): EventStore {
    if (!this.started)
      throw new HostError('not_serving', `supervisor is not started: call start() before ${call}`, { retryable: true });
    if (this.status !== 'serving' || !this.store)
      throw new HostError('not_serving', `supervisor is ${this.status}`, { retryable: true });
    return this.store;
  }
}

/** Creates a supervisor; call `start()` to boot it. */
export function createSupervisor(options: SupervisorOptions = {}): Supervisor {
  return new Supervisor(options);
}
