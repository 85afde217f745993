import { randomUUID } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { readArtifact } from '../drivers/confine.js';
import { createActor, fromPromise, initialTransition, type Actor, type InspectionEvent } from 'xstate';
import { z } from 'zod';
import {
  supervisorMachine,
  taskMachine,
  type BootSummary,
  type FrontierWork,
  type SupervisorFailure,
  type TaskContext,
} from '../machines/index.js';
import { EventStore, StoreError, resolveStateRoot, type EventRecord } from '../store/index.js';
import { systemClock, type Clock } from './clock.js';
import type { EffectRunner, TaskHandle } from './effects.js';
import { HostError, issuePath } from './errors.js';
import { OBJECT_KINDS, TaskSpec, type TaskSpecInput } from '../objects/index.js';
import {
  checkpointLiveTasks,
  checkpointRevision,
  commitCheckpoints,
  committedCheckpoint,
  recoverForBoot,
  type CheckpointBatch,
  type CheckpointInput,
  type ProgressListener,
  type RecoveryMode,
} from '../recovery/index.js';
import { TaskActor, type Attachments, type Committed, type SendResult } from './task-actor.js';

export interface SupervisorOptions {
  /** State root directory; default `ORDIVON_STATE` or `./.ordivon`. */
  state?: string;
  clock?: Clock;
  /** XState inspection observer passed to the supervisor actor and every Task actor. */
  inspect?: (event: InspectionEvent) => void;
  /** Performs frontier work (dispatch, verification, …). Without one, Tasks wait at their frontier. */
  effects?: EffectRunner;
  streamWarnAt?: number;
  purpose?: string;
  /** Boot validation: `full` verifies and replays every event (default); `checkpoint` starts Tasks from verified checkpoints (recovery/boot.ts). */
  recovery?: RecoveryMode;
  /**
   * While serving, a Task that has admitted this many events since its last checkpoint gets a new
   * one, taken right after the commit and written after it, off the admission path (default 100;
   * 0: only at boot and at a clean stop). After a crash, a checkpointed start then replays about
   * this many events per Task at most (plus any admitted while the checkpoint was being written),
   * like Akka Persistence's snapshot-every-N.
   */
  checkpointEvery?: number;
  /**
   * Called while `validating` with the running counts of the Tasks checked and events verified
   * (every 256 Tasks or 50,000 events per thread, and at the end): a full replay of a long
   * history takes seconds to minutes. A listener that throws does not stop the boot.
   */
  onBootProgress?: ProgressListener;
}

/** The scalar options, checked when a supervisor is created (`invalid_option` with the field). */
const ScalarOptions = z.object({
  streamWarnAt: z.number().int().positive().optional(),
  recovery: z.enum(['full', 'checkpoint']).optional(),
  checkpointEvery: z.number().int().nonnegative().optional(),
  onBootProgress: z.custom<ProgressListener>((value) => typeof value === 'function', 'expected a function').optional(),
});

const DEFAULT_CHECKPOINT_EVERY = 100;

export interface TaskView {
  taskId: string;
  revision: number;
  state: string;
  frontier: FrontierWork;
  context: TaskContext;
  spec: TaskSpec;
}

export interface SendOptions {
  /** Idempotency key: a retried send with the same id is acknowledged without writing again. */
  eventId?: string;
}

export type { BootSummary };

/** `Supervisor.checkpoints()`: how checkpointing has gone since `start()`. */
export interface CheckpointStats {
  /** `checkpointEvery` in force (0: checkpoints only after boot and at a clean stop). */
  every: number;
  written: number;
  /** Checkpoints that could not be written; each only lengthens the next checkpointed start. */
  failed: number;
  /** The last failure's message, null when none. */
  lastFailure: string | null;
  /** Taken after commits and not yet written (or being written now). */
  pending: number;
}

/**
 * The Host's supervisor (DESIGN §6), embeddable in any Node service.
 *
 * `start()` opens the state root (taking its lock), rebuilds and checks every Task from its
 * events, reconciles unknown dispatches, and only then serves. `send` resolves with how the
 * Task took the event; it never throws for a refused event. `stop()` drains: no new events,
 * in-flight transitions commit, effects are aborted, the store is closed and the lock released.
 */
export class Supervisor {
  private store: EventStore | undefined;
  private readonly tasks = new Map<string, TaskActor>();
  private readonly specs = new Map<string, TaskSpec>();
  private readonly listeners = new Set<(committed: Committed) => void>();
  /** Frontier work in flight per Task, with the Assignment generation it serves. */
  private readonly working = new Map<string, { controller: AbortController; generation: number }>();
  private readonly clock: Clock;
  private readonly checkpointEvery: number;
  /** Checkpoints taken after commits and not yet written (one per Task), and the write of the last batch. */
  private readonly due = new Map<string, CheckpointInput>();
  private checkpointing: Promise<void> = Promise.resolve();
  private checkpointQueued = false;
  private readonly checkpointTally = { written: 0, failed: 0, lastFailure: null as string | null };
  /** Checkpoints of the batch being written now. */
  private writing = 0;
  readonly root: string;
  readonly actor: Actor<typeof supervisorMachine>;

  constructor(private readonly options: SupervisorOptions = {}) {
    const parsed = ScalarOptions.safeParse(options);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new HostError('invalid_option', `supervisor option ${issuePath(issue.path)}: ${issue.message}`);
    }
    this.checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
    this.root = resolveStateRoot(options.state);
    this.clock = options.clock ?? systemClock;
    const logic = supervisorMachine.provide({
      actors: {
        open: fromPromise(async () => this.open()),
        validate: fromPromise(async () => this.validate()),
        reconcile: fromPromise(async () => this.reconcile()),
        drain: fromPromise(async () => this.drain()),
      },
    });
    this.actor = createActor(logic, { id: 'supervisor', ...(options.inspect ? { inspect: options.inspect } : {}) });
  }

  /** Supervisor state: booting, validating, reconciling, serving, draining, stopped or failed. */
  get status(): string {
    return String(this.actor.getSnapshot().value);
  }

  get failure(): SupervisorFailure | null {
    return this.actor.getSnapshot().context.failure;
  }

  /** Boots and resolves once serving; rejects with a HostError carrying the failure code and findings. */
  async start(): Promise<void> {
    this.actor.start();
    const snapshot = await new Promise<ReturnType<typeof this.actor.getSnapshot>>((resolve) => {
      const check = (s: ReturnType<typeof this.actor.getSnapshot>) => {
        if (s.value === 'serving' || s.status === 'done') {
          sub.unsubscribe();
          resolve(s);
        }
      };
      const sub = this.actor.subscribe(check);
      check(this.actor.getSnapshot());
    });
    if (snapshot.value !== 'serving') {
      const failure = snapshot.context.failure;
      await this.store?.close().catch(() => undefined);
      this.store = undefined;
      throw new HostError(
        (failure?.code ?? 'boot_failed') as never,
        failure?.message ?? 'supervisor did not start',
        (failure?.findings ?? []) as never,
      );
    }
    for (const task of this.tasks.values()) this.kick(task);
  }

  /** Creates a Task from a spec; fails `invalid_spec` (with the field path) or `task_exists`. */
  async createTask(spec: TaskSpecInput): Promise<{ taskId: string; revision: number }> {
    const store = this.serving();
    const parsed = TaskSpec.safeParse(spec);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new HostError('invalid_spec', `task spec ${issuePath(issue.path)}: ${issue.message}`);
    }
    const body = pinFrozenTests(parsed.data);
    const taskId = body.taskId ?? `task-${randomUUID()}`;
    if (this.tasks.has(taskId)) throw new HostError('task_exists', `task ${taskId} already exists`);
    const specDigest = store.prepareObject({ kind: 'task-spec', body }).digest;
    const [initial] = initialTransition(taskMachine);
    const task = this.track(
      new TaskActor(taskId, initial, 0, store, this.clock, (c) => this.committed(c), this.options.inspect),
    );
    this.specs.set(taskId, body);
    const result = await task.send(
      {
        type: 'task.created',
        taskId,
        attempt: 1,
        specDigest,
        requiredArtifacts: body.requiredArtifacts.map((a) => a.name),
      },
      'host',
      { objects: [{ kind: 'task-spec', body }] },
    );
    if (!result.written) {
      this.tasks.delete(taskId);
      task.stop();
      throw new HostError(
        result.code === 'revision_conflict' ? 'task_exists' : (result.code as never),
        result.detail ?? 'task not created',
      );
    }
    return { taskId, revision: result.revision };
  }

  /** Sends an event from outside the Host (scripts, CLI, services): only allow-listed types are taken. */
  send(taskId: string, event: unknown, options: SendOptions = {}): Promise<SendResult> {
    return this.deliver(taskId, event, 'external', {}, options);
  }

  getTask(taskId: string): TaskView | undefined {
    const task = this.tasks.get(taskId);
    if (!task) return undefined;
    return {
      taskId,
      revision: task.revision,
      state: task.state,
      frontier: task.frontier,
      context: task.context,
      spec: this.specs.get(taskId)!,
    };
  }

  listTasks(): Array<Omit<TaskView, 'context' | 'spec'> & { generation: number; title: string }> {
    return [...this.tasks.values()].map((t) => ({
      taskId: t.taskId,
      revision: t.revision,
      state: t.state,
      frontier: t.frontier,
      generation: t.context.generation,
      title: this.specs.get(t.taskId)?.title ?? '',
    }));
  }

  /** The stored events of a Task, in revision order. */
  events(taskId: string): Array<{ revision: number } & EventRecord> {
    return [...this.serving().stream(taskId)].map(({ revision, event }) => ({ revision, ...event }));
  }

  /** Reads an immutable object (receipt, evidence, outcome, …) by digest, re-checked against its digest. */
  getObject<T = unknown>(digest: string): { kind: string; body: T } {
    return this.serving().getObject<T>(digest);
  }

  /** The live XState actor of a Task (for the inspector and `subscribe`). */
  taskActor(taskId: string): TaskActor | undefined {
    return this.tasks.get(taskId);
  }

  /** Listens to every commit, after it is durable. Returns the unsubscribe function. */
  subscribe(listener: (committed: Committed) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Resolves with the state once the Task reaches one of `states`; rejects if it reaches one of
   * `failOn` first, or the supervisor stops. Listens to commits; never polls.
   */
  waitFor(taskId: string, states: string[], failOn: string[] = ['cancelled', 'blocked']): Promise<string> {
    return new Promise((resolve, reject) => {
      let stop = () => {};
      const check = (): void => {
        const state = this.tasks.get(taskId)?.state;
        if (state !== undefined && states.includes(state)) {
          stop();
          resolve(state);
        } else if (state !== undefined && failOn.includes(state)) {
          stop();
          reject(
            new HostError(
              'invalid_transition',
              `task ${taskId} reached ${state} while waiting for ${states.join(' | ')}`,
            ),
          );
        }
      };
      const unsubscribe = this.subscribe((c) => c.taskId === taskId && check());
      const lifecycle = this.actor.subscribe({
        complete: () => (stop(), reject(new HostError('not_serving', 'supervisor stopped'))),
      });
      stop = () => {
        unsubscribe();
        lifecycle.unsubscribe();
      };
      check();
    });
  }

  /**
   * Resolves once the checkpoints taken so far (see `checkpointEvery`) are written, or failed to
   * be, with the counts then: a checkpoint only ever shortens the next start, so nothing waits
   * for them but this and `stop()`.
   */
  async checkpointsWritten(): Promise<CheckpointStats> {
    await this.checkpointing;
    return this.checkpoints();
  }

  /** What validation did at `start()` (null before it finished, or when it found damage: see `failure`). */
  bootReport(): BootSummary | null {
    const { boot, failure } = this.actor.getSnapshot().context;
    return boot && failure === null ? { ...boot } : null;
  }

  /** Checkpoints written and failed since `start()` (after boot, while serving, at stop), and those taken but not yet written. */
  checkpoints(): CheckpointStats {
    return { every: this.checkpointEvery, ...this.checkpointTally, pending: this.due.size + this.writing };
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

  private async open(): Promise<void> {
    try {
      this.store = EventStore.open({
        root: this.root,
        kinds: OBJECT_KINDS,
        purpose: this.options.purpose ?? `supervisor pid ${process.pid}`,
        ...(this.options.streamWarnAt ? { streamWarnAt: this.options.streamWarnAt } : {}),
      });
    } catch (error) {
      if (error instanceof StoreError)
        throw new HostError(error.code as never, error.message, [
          { code: error.code as never, message: error.message },
        ]);
      // LMDB (a numeric errno or MDB code) and the file system (`EIO`, `ENOSPC`, …) report a failed
      // open with a code of their own: a storage fault, not a defect.
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code !== 'number' && !(typeof code === 'string' && /^E[A-Z0-9]+$/.test(code))) throw error;
      const message = `cannot open the state root ${this.root} (its LMDB environment or files): ${(error as Error).message} (code ${String(code)})`;
      throw new HostError('storage_failed', message, [{ code: 'storage_failed', message }]);
    }
  }

  private async validate(): Promise<BootSummary> {
    const store = this.store!;
    const listener = this.options.onBootProgress;
    const onProgress: ProgressListener = (progress) => {
      this.actor.send({ type: 'progress', progress: { ...progress } });
      try {
        listener?.(progress);
      } catch {
        /* a listener's failure is its own */
      }
    };
    const started = this.clock.mono();
    const report = await recoverForBoot(store, { mode: this.options.recovery ?? 'full', onProgress });
    this.tally(report.checkpoints);
    const { mode, events, objects, workers, checkpoint } = report;
    const summary: BootSummary = {
      mode,
      tasks: report.tasks.length,
      events,
      objects,
      workers,
      ms: this.clock.mono() - started,
    };
    if (checkpoint)
      summary.checkpoint = {
        trusted: checkpoint.trusted,
        tailReplayed: checkpoint.tailReplayed,
        fullReplayed: checkpoint.fullReplayed,
      };
    if (report.findings.length > 0) {
      const first = report.findings[0]!;
      throw new HostError(first.code, `state root ${this.root} failed validation: ${first.message}`, report.findings);
    }
    for (const rebuilt of report.tasks) {
      const spec =
        rebuilt.spec ?? TaskSpec.parse(store.getObject(rebuilt.snapshot.context.specDigest!, 'task-spec').body);
      this.specs.set(rebuilt.taskId, spec);
      this.track(
        new TaskActor(
          rebuilt.taskId,
          rebuilt.snapshot,
          rebuilt.revision,
          store,
          this.clock,
          (c) => this.committed(c),
          this.options.inspect,
        ),
      );
    }
    return summary;
  }

  /**
   * A dispatch whose intent is durable but whose response was never recorded may or may not
   * have reached the Runtime: it becomes `unknown`, and the effect runner reconciles it by its
   * exact clientRequestId before anything else is served.
   */
  private async reconcile(): Promise<{ reconciled: number }> {
    let reconciled = 0;
    for (const task of this.tasks.values()) {
      if (task.frontier === 'confirm_dispatch') {
        await task.send({ type: 'dispatch.lost', clientRequestId: task.context.dispatch!.clientRequestId }, 'host');
      }
      if (task.frontier === 'reconcile' && this.options.effects) {
        await this.perform(task, 'reconcile');
        reconciled++;
      }
    }
    return { reconciled };
  }

  private async drain(): Promise<void> {
    for (const { controller } of this.working.values())
      controller.abort(new HostError('not_serving', 'supervisor is draining'));
    await Promise.all([...this.tasks.values()].map((t) => t.settled()));
    await this.options.effects?.close?.();
    await this.checkpointing;
    this.due.clear();
    if (this.store) this.tally(await checkpointLiveTasks(this.store, this.tasks.values(), this.specs));
    for (const task of this.tasks.values()) task.stop();
    await this.store?.close();
    this.store = undefined;
  }

  // ---- internals --------------------------------------------------------------------------------

  private serving(): EventStore {
    if (this.status !== 'serving' || !this.store)
      throw new HostError('not_serving', `supervisor is ${this.status}`, [], true);
    return this.store;
  }

  private track(task: TaskActor): TaskActor {
    this.tasks.set(task.taskId, task);
    return task;
  }

  private async deliver(
    taskId: string,
    event: unknown,
    origin: 'host' | 'external',
    attachments: Attachments,
    options: SendOptions,
  ): Promise<SendResult> {
    this.serving();
    const task = this.tasks.get(taskId);
    if (!task)
      return {
        admitted: false,
        written: false,
        code: 'task_not_found',
        detail: `no task ${taskId}`,
        revision: 0,
        state: 'none',
      };
    const withId =
      options.eventId && typeof event === 'object' && event !== null ? { ...event, eventId: options.eventId } : event;
    return task.send(withId, origin, attachments);
  }

  private committed(committed: Committed): void {
    for (const listener of this.listeners) {
      try {
        listener(committed);
      } catch {
        /* a listener's failure is its own */
      }
    }
    const task = this.tasks.get(committed.taskId);
    // A new Assignment generation supersedes work in flight for the old one (e.g. waiting on a
    // run that is now fenced): stop waiting, so the new generation's frontier starts at once.
    const inFlight = this.working.get(committed.taskId);
    if (task && inFlight && inFlight.generation !== task.context.generation) {
      inFlight.controller.abort(
        new HostError('stale_assignment', `generation ${inFlight.generation} superseded by ${task.context.generation}`),
      );
    }
    if (task && this.status === 'serving') queueMicrotask(() => this.kick(task));
    if (
      task &&
      this.store &&
      this.checkpointEvery > 0 &&
      committed.revision - checkpointRevision(this.store, committed.taskId) >= this.checkpointEvery &&
      !this.due.has(committed.taskId)
    ) {
      const entry = committedCheckpoint(this.store, task, this.specs.get(committed.taskId));
      if (entry) {
        this.due.set(committed.taskId, entry);
        this.queueCheckpoints();
      }
    }
  }

  /**
   * Writes the checkpoints taken after commits once the current turn is over, so the Tasks that
   * came due together share one write transaction; one batch at a time, off the admission path.
   */
  private queueCheckpoints(): void {
    if (this.checkpointQueued) return;
    this.checkpointQueued = true;
    this.checkpointing = this.checkpointing
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(async () => {
        this.checkpointQueued = false;
        const entries = [...this.due.values()];
        this.due.clear();
        this.writing = entries.length;
        try {
          if (this.store && entries.length > 0) this.tally(await commitCheckpoints(this.store, entries));
        } finally {
          this.writing = 0;
        }
      });
  }

  private tally(batch: CheckpointBatch): void {
    this.checkpointTally.written += batch.written;
    this.checkpointTally.failed += batch.failed;
    if (batch.error !== undefined) this.checkpointTally.lastFailure = batch.error;
  }

  /** Starts the Task's frontier work unless some is already in flight for it. */
  private kick(task: TaskActor): void {
    if (!this.options.effects || task.frontier === 'none' || this.working.has(task.taskId) || this.status !== 'serving')
      return;
    void this.perform(task, task.frontier);
  }

  private async perform(task: TaskActor, work: FrontierWork): Promise<void> {
    const effects = this.options.effects!;
    const controller = new AbortController();
    this.working.set(task.taskId, { controller, generation: task.context.generation });
    const handle: TaskHandle = {
      taskId: task.taskId,
      revision: task.revision,
      state: task.state,
      context: task.context,
      spec: this.specs.get(task.taskId)!,
      store: this.store!,
      send: (event, attachments = {}) => task.send(event, 'host', attachments),
    };
    try {
      await effects.perform(handle, work, controller.signal);
    } catch {
      // An effect that fails leaves the Task at its frontier; the next commit or boot retries it.
    } finally {
      this.working.delete(task.taskId);
    }
    // Continue if the work moved the Task on; a step that committed nothing is not retried in a loop
    // (it is retried on the next commit or at the next boot).
    if (task.revision !== handle.revision && this.status === 'serving') this.kick(task);
  }
}

/**
 * Records the digest of every frozen acceptance test as seeded, so verification can prove the
 * tests were not modified. Digests given in the spec must match the seed.
 */
function pinFrozenTests(spec: TaskSpec): TaskSpec {
  const acceptance = spec.acceptance;
  if (!acceptance || acceptance.frozenTests.length === 0) return spec;
  if (!spec.workspaceSeed || !isAbsolute(spec.workspaceSeed)) {
    throw new HostError(
      'invalid_spec',
      'task spec workspaceSeed: an absolute path is required when acceptance.frozenTests are declared',
    );
  }
  const digests: Record<string, string> = {};
  for (const test of acceptance.frozenTests) {
    let read;
    try {
      read = readArtifact(spec.workspaceSeed, test, 16 << 20);
    } catch (error) {
      throw new HostError('invalid_spec', `task spec workspaceSeed: ${(error as Error).message}`);
    }
    if (!read.ok)
      throw new HostError('invalid_spec', `task spec acceptance.frozenTests: ${test}: ${read.code} (${read.detail})`);
    const pinned = acceptance.frozenTestDigests?.[test];
    if (pinned !== undefined && pinned !== read.value.digest) {
      throw new HostError(
        'invalid_spec',
        `task spec acceptance.frozenTestDigests.${test}: the seed's file has ${read.value.digest}`,
      );
    }
    digests[test] = read.value.digest;
  }
  return { ...spec, acceptance: { ...acceptance, frozenTestDigests: digests } };
}

/** Creates a supervisor; call `start()` to boot it. */
export function createSupervisor(options: SupervisorOptions = {}): Supervisor {
  return new Supervisor(options);
}
