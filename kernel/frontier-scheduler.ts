import type { FrontierWork } from '../machines/index.js';
import { realTimer, systemClock, type Clock } from './clock.js';
import type { EventStore } from '../store/index.js';
import type { FrontierRunner, TaskHandle } from './frontier-runner.js';
import {
  FrontierRetryPolicy,
  askAboutFailedWork,
  askable,
  failureCause,
  frontierAsked,
  frontierRetryDelay,
} from './frontier-retry.js';
import { HostError } from './errors.js';
import type { TaskSpec } from '../objects/index.js';
import type { TaskActor } from './task-actor.js';
import type { QueuedRun, RunLimits } from './run-queue.js';
import { RunSlots } from './run-slots.js';

export { FRONTIER_RETRY_ATTEMPTS, FRONTIER_RETRY_CAP_MS, FRONTIER_RETRY_MS } from './frontier-retry.js';

export interface FrontierSchedulerOptions {
  /** Performs the work; without one nothing is ever started and Tasks wait at their frontier. */
  frontier?: FrontierRunner | undefined;
  /** Whether new work may start now (the Supervisor is serving). */
  serving: () => boolean;
  /** The open store, as the frontier runner's handle shows it. */
  store: () => EventStore | undefined;
  /** Each Task's spec, as the frontier runner's handle shows it. */
  specs: ReadonlyMap<string, TaskSpec>;
  /** Whose timers space the retries of work that failed, and whose wall time a question carries (default: the system's). */
  clock?: Clock | undefined;
  /** How failed work is retried, and when an operator is asked (`SupervisorOptions.frontierRetry`; defaults when absent). */
  retry?: Partial<FrontierRetryPolicy> | undefined;
  /** At most how many agent runs at once (`SupervisorOptions.concurrency`); absent: no limit. */
  limits?: RunLimits | undefined;
  /** The Tasks served here, which hold or wait for run slots (required with `limits`). */
  tasks?: ReadonlyMap<string, TaskActor> | undefined;
}

/**
 * Runs each Task's frontier work (docs/design.md, "Where the Host acts": compile a Context, dispatch, observe, verify, …)
 * through the FrontierRunner, at most one piece per Task at a time: after every commit, once per
 * Task when serving starts, and for unknown dispatches during the Supervisor's `reconciling` step.
 *
 * Work that throws leaves its Task at the frontier it was at (the error is not reported here: the
 * frontier runner reports its own steps), and is tried again after the retry policy's backoff
 * while serving, or sooner by the Task's next commit or the next boot: a lookup or an observation
 * that failed because the provider was down is asked again once it is back, and no Task waits for
 * an event that may never come. The count of failures in a row is kept here, in memory; once it
 * reaches the policy's `attempts` the work is not retried but put to an operator, durably: the
 * DecisionRequest `<task>/frontier/<work>/r<revision>` names the last failure's code and message.
 * While that request is pending the Task's work is not run, after a restart too (the scheduler
 * reads it from the Task's context); answered `retry` (or revoked) the work runs again with a new
 * count, answered `cancel` the Host cancels the Task. If the process dies while work is in flight,
 * boot derives the same frontier from the committed state and starts it again, which is why a
 * FrontierRunner must be idempotent.
 *
 * With run limits (`limits`, `SupervisorOptions.concurrency`) a `dispatch` is not started when it
 * is kicked but joins the run line (run-slots.ts), which starts it once a slot is free, first in
 * line first; the line holds nothing durable, so a restart rebuilds it in the same order.
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
  /** Per Task whose last work threw: which work, how many times in a row, and the cancel of the armed retry. */
  private readonly failing = new Map<string, { work: FrontierWork; failures: number; cancel: () => void }>();
  /** The retry policy, defaults filled in. */
  private readonly policy: FrontierRetryPolicy;
  /** With run limits: the line of Tasks whose dispatch waits for a slot. */
  private readonly slots: RunSlots | undefined;

  constructor(private readonly options: FrontierSchedulerOptions) {
    this.policy = FrontierRetryPolicy.parse(options.retry ?? {});
    const { limits, tasks } = options;
    if (limits && (limits.runs !== undefined || Object.keys(limits.harnesses ?? {}).length > 0) && tasks)
      this.slots = new RunSlots({
        limits,
        tasks,
        store: options.store,
        dispatching: (taskId) => this.working.get(taskId)?.work === 'dispatch',
        eligible: (task) => frontierAsked(task)?.status !== 'pending',
        canStart: () => this.enabled && !this.held && options.serving(),
        start: (task) => {
          if (task.frontier === 'dispatch' && !this.working.has(task.taskId)) void this.perform(task, 'dispatch');
        },
      });
  }

  /**
   * Where each Task whose dispatch waits for a run slot stands (`queued`: the limit it waits on, its
   * place in line); empty without limits.
   */
  queued(): Map<string, QueuedRun> {
    return this.slots?.queued() ?? new Map();
  }

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
   * (e.g. waiting on a run that is now fenced), a cancel aborts whatever is in flight, and, while serving, the Task's frontier is kicked
   * once the current microtask is over.
   */
  committed(task: TaskActor): void {
    const inFlight = this.working.get(task.taskId);
    if (inFlight && inFlight.generation !== task.context.generation) {
      inFlight.controller.abort(
        new HostError('stale_assignment', `generation ${inFlight.generation} superseded by ${task.context.generation}`),
      );
    } else if (inFlight && task.state === 'cancelled') {
      // A cancelled Task's run is stopped at once: an agent must not go on spending for it.
      inFlight.controller.abort(new HostError('task_cancelled', `task ${task.taskId} was cancelled`));
    }
    if (this.options.serving()) queueMicrotask(() => this.kick(task));
    // Any commit may free a run slot (a run observed, a Task cancelled or reassigned).
    this.slots?.schedule();
  }

  /**
   * Starts the Task's frontier work, unless there is none, some is in flight for it, not serving,
   * or an operator was asked about it and has not answered; answered `cancel`, cancels the Task.
   */
  kick(task: TaskActor): void {
    if (!this.enabled || this.held || this.working.has(task.taskId) || !this.options.serving()) return;
    if (task.frontier === 'none') return this.start(task);
    const asked = frontierAsked(task);
    if (asked?.status === 'pending') return;
    if (asked?.status === 'answered' && asked.answer === 'cancel') {
      const reason = `an operator answered cancel to ${asked.requestId}`;
      void this.perform(
        task,
        task.frontier,
        async (handle) => void (await handle.send({ type: 'task.cancel', reason })),
      );
      return;
    }
    // Under run limits a dispatch waits its turn: the line starts it when a slot is free.
    if (task.frontier === 'dispatch' && this.slots) return this.slots.wait(task);
    void this.perform(task, task.frontier);
  }

  /**
   * A Task created with `start` in its spec (docs/stages.md) gets that Assignment from the Host
   * serving it: right after `task.create`, or, when a crash came between the two commits, when a
   * Host serves it again (another one, on many Hosts). Once only: not when any Assignment was sent
   * to it, admitted or refused (a refused one would otherwise be sent again at each commit).
   */
  private start(task: TaskActor): void {
    const spec = this.options.specs.get(task.taskId);
    const store = this.options.store();
    if (!spec?.start || !store) return;
    const start = owedStart(spec, task.state, typesOf(store.stream(task.taskId)));
    if (!start) return;
    void this.perform(task, 'none', async (handle) => {
      await handle.send({ type: 'assignment.commit', harness: start.harness, stage: start.stage });
    });
  }

  /**
   * Performs `work` for the Task now (or `run` in its place, holding the Task's slot as work does)
   * and resolves when it is over (never rejects); if it moved the Task on and the Supervisor is
   * serving, kicks the next piece. Requires a frontier runner.
   */
  async perform(
    task: TaskActor,
    work: FrontierWork,
    run: (handle: TaskHandle, signal: AbortSignal) => Promise<void> = (handle, signal) =>
      this.options.frontier!.perform(handle, work, signal),
  ): Promise<void> {
    const controller = new AbortController();
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.working.set(task.taskId, { controller, generation: task.context.generation, work, done });
    const handle = this.handleOf(task);
    let failed: { error: unknown } | undefined;
    let asked = false;
    try {
      try {
        await run(handle, controller.signal);
      } catch (error) {
        failed = { error };
      }
      // Aborted work belongs to a Task fenced or no longer served here, and work the Task has left
      // is no longer its frontier: neither counts. Exhausted work is asked about while the Task's
      // slot is still held, so nothing starts it again before the question is durable.
      if (failed && !controller.signal.aborted && task.frontier === work) {
        const failures = this.countFailure(task.taskId, work);
        if (failures >= this.policy.attempts && askable(work) && this.options.serving())
          asked = await this.ask(task, work, failures, failed.error);
      } else this.forgetFailures(task.taskId);
    } finally {
      this.working.delete(task.taskId);
      finish();
      if (work === 'dispatch') this.slots?.schedule();
    }
    // Work that threw is tried again after its backoff, unless an operator was asked. A step that
    // committed nothing without throwing is not retried in a loop (its Task waits for a commit: an
    // answer, an event).
    if (asked) this.forgetFailures(task.taskId);
    else if (failed && task.revision === handle.revision && this.failing.has(task.taskId)) this.retryLater(task);
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
      } else if (
        task.frontier === 'reconcile' &&
        this.enabled &&
        !inFlight &&
        frontierAsked(task)?.status !== 'pending'
      ) {
        await this.perform(task, 'reconcile');
        reconciled++;
      }
    }
    return reconciled;
  }

  /** Counts one more failure of `work` in a row for the Task (a failure of other work starts anew); answers the count. */
  private countFailure(taskId: string, work: FrontierWork): number {
    const entry = this.failing.get(taskId);
    entry?.cancel();
    const failures = entry?.work === work ? entry.failures + 1 : 1;
    this.failing.set(taskId, { work, failures, cancel: () => undefined });
    return failures;
  }

  /**
   * Arms the retry of a Task's failed work: once, after the backoff its failures so far give (work
   * exhausted but not put to an operator waits the longest backoff each time).
   */
  private retryLater(task: TaskActor): void {
    const entry = this.failing.get(task.taskId)!;
    const delay =
      entry.failures >= this.policy.attempts
        ? this.policy.maxBackoffMs
        : frontierRetryDelay(this.policy, entry.failures);
    const { clock } = this.options;
    const fire = () => {
      entry.cancel = () => undefined;
      this.kick(task);
    };
    entry.cancel = clock?.setTimer ? clock.setTimer(delay, fire) : realTimer(delay, fire);
  }

  /**
   * Opens the operator's question about work that failed `failures` times in a row (never
   * rejects); answers whether the Task has it. Reported as a step through the frontier runner.
   */
  private async ask(task: TaskActor, work: FrontierWork, failures: number, error: unknown): Promise<boolean> {
    const runner = this.options.frontier!;
    const opener = {
      clock: this.options.clock ?? systemClock,
      step: (handle: TaskHandle, text: string) => runner.step?.(handle.taskId, text),
    };
    runner.step?.(
      task.taskId,
      `${work} failed ${failures} times in a row (${failureCause(error)}): not retried, asking an operator`,
    );
    try {
      return await askAboutFailedWork(opener, this.handleOf(task), { work, failures, error });
    } catch (reason) {
      runner.step?.(task.taskId, `asking an operator about ${work} failed (${failureCause(reason)})`);
      return false;
    }
  }

  /** What the frontier runner sees of the Task now. */
  private handleOf(task: TaskActor): TaskHandle {
    return {
      taskId: task.taskId,
      revision: task.revision,
      state: task.state,
      context: task.context,
      spec: this.options.specs.get(task.taskId)!,
      store: this.options.store()!,
      send: (event, attachments = {}) => task.send(event, 'host', attachments),
    };
  }

  private forgetFailures(taskId: string): void {
    this.failing.get(taskId)?.cancel();
    this.failing.delete(taskId);
  }

  /** Aborts the work in flight for one Task (it is no longer served here), and any retry armed for it. */
  abort(taskId: string, reason: unknown): void {
    this.working.get(taskId)?.controller.abort(reason);
    this.forgetFailures(taskId);
    this.slots?.forget(taskId);
  }

  /** Aborts all work in flight with `reason` (draining); each settles on its own. */
  abortAll(reason: unknown): void {
    for (const { controller } of this.working.values()) controller.abort(reason);
    for (const taskId of [...this.failing.keys()]) this.forgetFailures(taskId);
  }
}

/**
 * The Assignment a Task's spec names as its `start` (docs/stages.md) while the Host still owes it:
 * the Task is `open` and no `assignment.commit` was ever sent to it, admitted or refused (one
 * refused is not sent again). `types`: the Task's event types in order.
 */
export function owedStart(
  spec: Pick<TaskSpec, 'start'>,
  state: string,
  types: Iterable<string>,
): TaskSpec['start'] | undefined {
  if (!spec.start || state !== 'open') return undefined;
  for (const type of types) if (type === 'assignment.commit') return undefined;
  return spec.start;
}

function* typesOf(stream: Iterable<{ event: { type: string } }>): Iterable<string> {
  for (const { event } of stream) yield event.type;
}
