import type { FrontierWork } from '../machines/index.js';
import { realTimer, type Clock } from './clock.js';
import type { EventStore } from '../store/index.js';
import type { FrontierRunner, TaskHandle } from './frontier-runner.js';
import { HostError } from './errors.js';
import type { TaskSpec } from '../objects/index.js';
import type { TaskActor } from './task-actor.js';

export interface FrontierSchedulerOptions {
  /** Performs the work; without one nothing is ever started and Tasks wait at their frontier. */
  frontier?: FrontierRunner | undefined;
  /** Whether new work may start now (the Supervisor is serving). */
  serving: () => boolean;
  /** The open store, as the frontier runner's handle shows it. */
  store: () => EventStore | undefined;
  /** Each Task's spec, as the frontier runner's handle shows it. */
  specs: ReadonlyMap<string, TaskSpec>;
  /** Whose timers space the retries of work that failed (default: real timers). */
  clock?: Clock | undefined;
}

/** The first retry of failed frontier work waits this long; each further one twice as long, up to the cap. */
export const FRONTIER_RETRY_MS = 250;
export const FRONTIER_RETRY_CAP_MS = 30_000;

/**
 * Runs each Task's frontier work (docs/design.md, "Where effects happen": compile a Context, dispatch, observe, verify, …)
 * through the FrontierRunner, at most one piece per Task at a time: after every commit, once per
 * Task when serving starts, and for unknown dispatches during the Supervisor's `reconciling` step.
 *
 * Nothing here is durable. Work that throws leaves its Task at the frontier it was at (the error is
 * not reported here: the frontier runner reports its own steps), and is tried again after a
 * backoff (FRONTIER_RETRY_MS, doubling up to FRONTIER_RETRY_CAP_MS) while serving, or sooner by the
 * Task's next commit or the next boot: a lookup or an observation that failed because the provider
 * was down is asked again once it is back, and no Task waits for an event that may never come. If
 * the process dies while work is in flight, boot derives the same frontier from the committed
 * state and starts it again, which is why a FrontierRunner must be idempotent.
 */
export class FrontierScheduler {
  /** Frontier work in flight per Task, with the Assignment generation it serves and what it is. */
  private readonly working = new Map<
    string,
    { controller: AbortController; generation: number; work: FrontierWork; done: Promise<void> }
  >();
  /** Set by `hold()` (a drain): work in flight goes on, nothing new starts. */
  private held = false;
  /** Who waits for the work in flight to be over (`idle()`). */
  private readonly idlers = new Set<() => void>();
  /** Per Task whose last work threw: how many times in a row, and the cancel of the armed retry. */
  private readonly failing = new Map<string, { failures: number; cancel: () => void }>();

  constructor(private readonly options: FrontierSchedulerOptions) {}

  /** True when there is a frontier runner, i.e. frontier work is performed at all. */
  get enabled(): boolean {
    return this.options.frontier !== undefined;
  }

  /** Whether some work is in flight for the Task now. */
  busy(taskId: string): boolean {
    return this.working.has(taskId);
  }

  /**
   * After a commit of `task`: a new Assignment generation aborts work in flight for the old one
   * (e.g. waiting on a run that is now fenced), and, while serving, the Task's frontier is kicked
   * once the current microtask is over.
   */
  committed(task: TaskActor): void {
    const inFlight = this.working.get(task.taskId);
    if (inFlight && inFlight.generation !== task.context.generation) {
      inFlight.controller.abort(
        new HostError('stale_assignment', `generation ${inFlight.generation} superseded by ${task.context.generation}`),
      );
    }
    if (this.options.serving()) queueMicrotask(() => this.kick(task));
  }

  /** Starts the Task's frontier work, unless there is none, some is in flight for it, or not serving. */
  kick(task: TaskActor): void {
    if (
      !this.enabled ||
      this.held ||
      task.frontier === 'none' ||
      this.working.has(task.taskId) ||
      !this.options.serving()
    )
      return;
    void this.perform(task, task.frontier);
  }

  /**
   * Performs `work` for the Task now and resolves when it is over (never rejects); if it moved the
   * Task on and the Supervisor is serving, kicks the next piece. Requires a frontier runner.
   */
  async perform(task: TaskActor, work: FrontierWork): Promise<void> {
    const runner = this.options.frontier!;
    const controller = new AbortController();
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.working.set(task.taskId, { controller, generation: task.context.generation, work, done });
    const handle: TaskHandle = {
      taskId: task.taskId,
      revision: task.revision,
      state: task.state,
      context: task.context,
      spec: this.options.specs.get(task.taskId)!,
      store: this.options.store()!,
      send: (event, attachments = {}) => task.send(event, 'host', attachments),
    };
    let failed = false;
    try {
      await runner.perform(handle, work, controller.signal);
    } catch {
      failed = true;
    } finally {
      this.working.delete(task.taskId);
      finish();
    }
    // Work that threw is tried again after its backoff; aborted work belongs to a Task fenced or
    // no longer served here. A step that committed nothing without throwing is not retried in a
    // loop (its Task waits for a commit: an answer, an event).
    if (failed && task.revision === handle.revision && !controller.signal.aborted) this.retryLater(task);
    else this.forgetFailures(task.taskId);
    // Continue if the work moved the Task on.
    if (task.revision !== handle.revision && this.options.serving()) this.kick(task);
    if (this.working.size === 0) for (const idle of [...this.idlers]) idle();
  }

  /**
   * A drain's first step: no new work starts (not after a commit, a failure's backoff or a boot
   * kick), while the work in flight goes on and commits what it finds — a running stage's run
   * that ends is observed and its evidence kept. Work waiting out a retry backoff (an `evaluate`)
   * is aborted: it started nothing and boot derives it again. Answers which Tasks are running a
   * stage now (observing its run).
   */
  hold(): string[] {
    this.held = true;
    for (const [, { controller, work }] of this.working)
      if (work === 'evaluate') controller.abort(new HostError('not_serving', 'supervisor is draining'));
    return this.running();
  }

  /** The Tasks whose work in flight is observing a stage's run. */
  running(): string[] {
    return [...this.working].filter(([, w]) => w.work === 'observe_run').map(([taskId]) => taskId);
  }

  /** Resolves once no work is in flight (at once when none is). */
  idle(): Promise<void> {
    if (this.working.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => (this.idlers.delete(done), resolve());
      this.idlers.add(done);
    });
  }

  /**
   * The Supervisor's `reconciling` step, before serving: a dispatch whose intent is durable but
   * whose response was never recorded may or may not have reached the Runtime, so it becomes
   * `unknown`; with a frontier runner, every `unknown` dispatch is then looked up by its exact
   * clientRequestId (`reconcile` work), one Task at a time. Resolves with how many were looked up.
   * If the process dies in between, the next boot finds the same frontiers and does it again.
   */
  async reconcile(tasks: Iterable<TaskActor>): Promise<number> {
    let reconciled = 0;
    for (const task of tasks) {
      if (task.frontier === 'confirm_dispatch') {
        await task.send({ type: 'dispatch.lost', clientRequestId: task.context.dispatch!.clientRequestId }, 'host');
      }
      // A Task adopted while serving may have its lookup in flight already, kicked by the commit of
      // `dispatch.lost` above: that one is waited for, as a second would start a second chain of
      // work for the Task (two dispatches racing, one of them declared lost).
      const inFlight = this.working.get(task.taskId);
      if (inFlight?.work === 'reconcile') {
        await inFlight.done;
        reconciled++;
      } else if (task.frontier === 'reconcile' && this.enabled && !inFlight) {
        await this.perform(task, 'reconcile');
        reconciled++;
      }
    }
    return reconciled;
  }

  /** Arms the retry of a Task's failed work: once, after the backoff its failures so far give. */
  private retryLater(task: TaskActor): void {
    const failures = (this.failing.get(task.taskId)?.failures ?? 0) + 1;
    this.failing.get(task.taskId)?.cancel();
    const delay = Math.min(FRONTIER_RETRY_CAP_MS, FRONTIER_RETRY_MS * 2 ** (failures - 1));
    const { clock } = this.options;
    const fire = () => {
      const entry = this.failing.get(task.taskId);
      if (entry) entry.cancel = () => undefined;
      this.kick(task);
    };
    const cancel = clock?.setTimer ? clock.setTimer(delay, fire) : realTimer(delay, fire);
    this.failing.set(task.taskId, { failures, cancel });
  }

  private forgetFailures(taskId: string): void {
    this.failing.get(taskId)?.cancel();
    this.failing.delete(taskId);
  }

  /** Aborts the work in flight for one Task (it is no longer served here), and any retry armed for it. */
  abort(taskId: string, reason: unknown): void {
    this.working.get(taskId)?.controller.abort(reason);
    this.forgetFailures(taskId);
  }

  /** Aborts all work in flight with `reason` (draining); each settles on its own. */
  abortAll(reason: unknown): void {
    for (const { controller } of this.working.values()) controller.abort(reason);
    for (const taskId of [...this.failing.keys()]) this.forgetFailures(taskId);
  }
}
