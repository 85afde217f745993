import { pathToFileURL } from 'node:url';
import { MessageChannel, SHARE_ENV, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { z } from 'zod';
import { killLeftovers, waitUntilStopped } from '../os/index.js';
import { systemClock, type Clock } from './clock.js';
import { DriverError } from './errors.js';
import { describeIssues, zodIssue } from '../base/index.js';
import { describeThrown, driverFailure, invalidInputFailure } from './failures.js';
import { DriverPoolOptions, POOL_DEFAULTS, type DriverPoolEvent, type DriverPoolStats } from './pool-options.js';
import { DriverKind, DriverResult, DriverRunInput, type DriverRunInputIn } from './receipt.js';
import { publishProviderSpawn, type ProviderSpawn } from './provider-spawn.js';
import { RestartIntensity } from './restart-intensity.js';
import { watchdogBoundMs } from './run-deadline.js';
import { WorkerMessage, type ParentMessage, type TaskEnvelope } from './worker-protocol.js';

/** Per-run options of `DriverPool.run`. */
export interface DriverRunOptions {
  signal?: AbortSignal;
  /**
   * Called (synchronously, in the caller's thread) for each process the run spawns, as soon as the
   * worker reports it. The same report is published on `PROVIDER_SPAWN_CHANNEL`. A throw is ignored.
   */
  onSpawn?: (spawn: ProviderSpawn) => void;
}

export interface DriverPool {
  /**
   * Runs one provider run on a worker thread. Resolves with a `DriverResult` for every outcome
   * (invalid input, crash, unavailability, timeout, abort included); rejects only with
   * `DriverError('pool_closed')` when called after `close()`. `signal` is forwarded into the
   * worker, where the driver stops its provider politely and kills its process group; the thread
   * is not terminated for an abort.
   */
  run(input: DriverRunInputIn, options?: DriverRunOptions): Promise<DriverResult>;
  /** Forgets the crashes of a driver kind and reopens it if restart intensity had tripped. */
  reset(kind: DriverKind): void;
  stats(): DriverPoolStats;
  /** Aborts every run in flight (politely, through the drivers), waits for them, then ends the threads. Idempotent. */
  close(): Promise<void>;
}

/**
 * Creates the driver pool: piscina worker threads running `drivers/worker.js`, one run per thread,
 * supervised per driver kind with restart intensity and exponential backoff.
 *
 * A run whose worker dies (exit, uncaught exception, out of memory, watchdog) resolves
 * `driver_crashed`; the process groups that run had started are SIGKILLed from here, since the
 * driver that would have stopped them is gone; piscina replaces the thread. Throws
 * `DriverError('invalid_pool_options')` for bad options.
 */
export function createDriverPool(options: DriverPoolOptions = {}): DriverPool {
  const o = parsePoolOptions(options);
  const clock = o.clock ?? systemClock;
  const intensity = new RestartIntensity({
    ...(o.intensity ?? POOL_DEFAULTS.intensity),
    backoff: o.backoff ?? POOL_DEFAULTS.backoff,
    clock,
  });
  const piscina = startThreads(o);
  const counters: PoolCounters = {
    workersCreated: 0,
    workersDestroyed: 0,
    crashes: 0,
    orphanGroupsKilled: 0,
    leftoverGroupsKilled: 0,
    completed: 0,
  };
  const emit = (event: DriverPoolEvent): void => {
    try {
      o.onEvent?.(event);
    } catch {
      // An observer's bug must not fail a run.
    }
  };
  piscina.on('workerCreate', () => counters.workersCreated++);
  piscina.on('workerDestroy', () => counters.workersDestroyed++);
  // Without a listener an idle worker's uncaught error would be thrown in the Host's thread.
  piscina.on('error', (error: unknown) => emit({ type: 'pool_error', detail: describeThrown(error) }));

  const pool: PoolContext = {
    clock,
    watchdogMs: o.watchdogMs ?? POOL_DEFAULTS.watchdogMs,
    intensity,
    piscina,
    counters,
    emit,
    closing: new AbortController(),
  };
  return poolFacade(pool);
}

/** What the steps of a run share with the pool that made them. */
interface PoolContext {
  readonly clock: Clock;
  readonly watchdogMs: number;
  readonly intensity: RestartIntensity;
  readonly piscina: Piscina;
  readonly counters: PoolCounters;
  readonly emit: (event: DriverPoolEvent) => void;
  readonly closing: AbortController;
}

type PoolCounters = Omit<DriverPoolStats, 'threads' | 'queued' | 'running' | 'drivers'>;

function parsePoolOptions(options: DriverPoolOptions): z.output<typeof DriverPoolOptions> {
  const parsed = DriverPoolOptions.safeParse(options);
  if (!parsed.success)
    throw new DriverError('invalid_pool_options', `invalid driver pool options: ${describeIssues(parsed.error)}`, {
      path: zodIssue('invalid_pool_options', parsed.error).path,
    });
  return parsed.data;
}

function startThreads(o: z.output<typeof DriverPoolOptions>): Piscina {
  const workerFile = o.workerFile ?? new URL('./worker.js', import.meta.url);
  return new Piscina({
    // A CommonJS entry that import()s the ES module handler (see worker-entry.cts for why).
    filename: new URL('./worker-entry.cjs', import.meta.url).href,
    workerData: {
      handlerModule:
        typeof workerFile !== 'string'
          ? workerFile.href
          : workerFile.startsWith('file:')
            ? workerFile
            : pathToFileURL(workerFile).href,
    },
    minThreads: o.minThreads ?? POOL_DEFAULTS.minThreads,
    maxThreads: o.maxThreads ?? POOL_DEFAULTS.maxThreads,
    idleTimeout: o.idleTimeoutMs ?? POOL_DEFAULTS.idleTimeoutMs,
    // Drivers are I/O-bound and may leave late events (child exits) after a run; keep the
    // worker's event loop running between tasks instead of parking it in Atomics.wait.
    atomics: 'disabled',
    // A worker otherwise gets a copy of process.env taken when piscina creates it, so a variable
    // set after the pool was made would reach the threads created later and not the warm ones.
    // Shared, every thread reads `envFrom` values as the process holds them at spawn time.
    env: SHARE_ENV,
    ...(o.resourceLimits !== undefined ? { resourceLimits: o.resourceLimits } : {}),
  });
}

function poolFacade(pool: PoolContext): DriverPool {
  const { piscina, intensity, counters, closing } = pool;
  const inflight = new Set<Promise<DriverResult>>();
  let closed: Promise<void> | undefined;
  return {
    run(input, runOptions = {}) {
      if (closing.signal.aborted) return Promise.reject(new DriverError('pool_closed', 'the driver pool is closed'));
      const settled = supervise(pool, input, runOptions.signal, runOptions.onSpawn)
        .catch((error: unknown) =>
          driverFailure('driver_crashed', 'pool_failed', `driver pool failed: ${describeThrown(error)}`),
        )
        .finally(() => {
          counters.completed++;
          inflight.delete(settled);
        });
      inflight.add(settled);
      return settled;
    },
    reset(kind) {
      intensity.reset(DriverKind.parse(kind));
    },
    stats() {
      const drivers = Object.fromEntries(DriverKind.options.map((kind) => [kind, intensity.inspect(kind)]));
      return {
        threads: piscina.threads.length,
        queued: piscina.queueSize,
        running: inflight.size,
        ...counters,
        drivers: drivers as DriverPoolStats['drivers'],
      };
    },
    close() {
      closed ??= (async () => {
        closing.abort(new Error('driver pool closed'));
        await Promise.allSettled([...inflight]);
        await piscina.destroy();
      })();
      return closed;
    },
  };
}

/** Parses a run, waits out its driver's backoff, dispatches it and counts a crash against the driver. */
async function supervise(
  pool: PoolContext,
  raw: DriverRunInputIn,
  signal: AbortSignal | undefined,
  onSpawn: DriverRunOptions['onSpawn'],
): Promise<DriverResult> {
  const parsedInput = DriverRunInput.safeParse(raw);
  if (!parsedInput.success) return invalidInputFailure(parsedInput.error);
  const input = parsedInput.data;
  const stop = signal !== undefined ? AbortSignal.any([signal, pool.closing.signal]) : pool.closing.signal;
  const refused = await passRestartGate(pool, input, stop);
  if (refused !== undefined) return refused;
  const result = await dispatch(pool, input, stop, onSpawn);
  if (!result.ok && result.kind === 'driver_crashed') {
    pool.counters.crashes++;
    const tripped = pool.intensity.recordCrash(input.driver);
    pool.emit({ type: 'run_crashed', ...runBase(input), code: result.code, detail: result.detail, tripped });
  }
  return result;
}

/** Waits until the driver may start another run; the failure to return instead, if it may not. */
async function passRestartGate(
  pool: PoolContext,
  input: DriverRunInput,
  stop: AbortSignal,
): Promise<DriverResult | undefined> {
  const base = runBase(input);
  for (;;) {
    if (stop.aborted)
      return driverFailure(
        'aborted',
        'pool_aborted',
        `aborted before reaching a worker: ${describeThrown(stop.reason)}`,
      );
    const gate = pool.intensity.gate(input.driver);
    if (gate.state === 'unavailable') {
      pool.emit({ type: 'driver_unavailable', ...base, detail: gate.detail });
      return driverFailure('driver_unavailable', 'restart_intensity_exceeded', gate.detail);
    }
    if (gate.waitMs === 0) return undefined;
    pool.emit({ type: 'backoff', ...base, waitMs: gate.waitMs });
    await pool.clock.sleep(gate.waitMs, stop);
  }
}

function runBase(input: DriverRunInput): { runId: string; driver: DriverKind } {
  return { runId: input.runId, driver: input.driver };
}

/** Runs one parsed run on a worker thread and turns its reply, or its death, into a `DriverResult`. */
async function dispatch(
  pool: PoolContext,
  input: DriverRunInput,
  stop: AbortSignal,
  onSpawn: DriverRunOptions['onSpawn'],
): Promise<DriverResult> {
  const { port1, port2 } = new MessageChannel();
  const run = new WorkerRun(pool, input, stop, onSpawn, port1);
  port1.on('message', run.handle);
  stop.addEventListener('abort', run.onStop, { once: true });
  if (stop.aborted) run.onStop();

  let reply: unknown;
  let death: { error: unknown } | undefined;
  try {
    const task: TaskEnvelope = { input, port: port2 };
    reply = await pool.piscina.run(task, { transferList: [port2], signal: run.kill.signal });
  } catch (error) {
    death = { error };
  } finally {
    stop.removeEventListener('abort', run.onStop);
    run.finish();
  }
  if (death !== undefined) return reportDeath(pool, run, death.error);
  return parseReply(reply);
}

/**
 * The parent's side of one run on a worker: the messages its worker posts, the processes it
 * spawned, and the watchdog that ends the thread when no result comes past the run's deadline.
 */
class WorkerRun {
  readonly kill = new AbortController();
  readonly children = new Map<number, { pid: number; startTicks: number; exited: boolean }>();
  threadId: number | null = null;
  watchdogFired = false;
  private watchdog: AbortController | undefined;
  private readonly base: { runId: string; driver: DriverKind };

  constructor(
    private readonly pool: PoolContext,
    readonly input: DriverRunInput,
    private readonly stop: AbortSignal,
    private readonly onSpawn: DriverRunOptions['onSpawn'],
    private readonly port: MessagePort,
  ) {
    this.base = runBase(input);
  }

  readonly handle = (raw: unknown): void => {
    const message = WorkerMessage.safeParse(raw);
    if (!message.success)
      return this.pool.emit({ type: 'bad_worker_message', ...this.base, detail: describeIssues(message.error) });
    const m = message.data;
    if (m.type === 'started') {
      this.threadId = m.threadId;
      this.pool.emit({ type: 'run_started', ...this.base, threadId: this.threadId });
      // Aborted already: the driver stops at once, so only the grace counts, not the deadline.
      this.arm(
        this.stop.aborted
          ? this.input.graceMs + this.pool.watchdogMs
          : watchdogBoundMs(this.input, this.pool.watchdogMs),
      );
    } else if (m.type === 'child') {
      this.recordChild(m.pid, m.startTicks);
    } else if (m.type === 'child_exit') {
      const child = this.children.get(m.pid);
      if (child !== undefined) child.exited = true;
    } else {
      this.pool.counters.leftoverGroupsKilled += m.pids.length;
      this.pool.emit({ type: 'leftovers_killed', ...this.base, pids: m.pids });
    }
  };

  readonly onStop = (): void => {
    const abort: ParentMessage = { type: 'abort', reason: describeThrown(this.stop.reason) };
    this.port.postMessage(abort);
    if (this.threadId !== null) this.arm(this.input.graceMs + this.pool.watchdogMs);
  };

  /** Disarms the watchdog and reads what the worker posted before it replied or died. */
  finish(): void {
    this.watchdog?.abort();
    this.watchdog = undefined;
    // Messages posted before the worker replied or died are queued on the port already.
    for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port))
      this.handle(m.message);
    this.port.close();
  }

  private arm(ms: number): void {
    this.watchdog?.abort();
    const current = new AbortController();
    this.watchdog = current;
    void this.pool.clock.sleep(ms, current.signal).then((elapsed) => {
      if (!elapsed || this.watchdog !== current) return;
      this.watchdogFired = true;
      this.kill.abort(new Error(`no result ${ms} ms past the run's deadline`));
    });
  }

  private recordChild(pid: number, startTicks: number): void {
    this.children.set(pid, { pid, startTicks, exited: false });
    this.pool.emit({ type: 'child_spawned', ...this.base, pid });
    const spawn: ProviderSpawn = {
      ...this.base,
      ...(this.input.jobId !== undefined ? { jobId: this.input.jobId } : {}),
      pid,
      startTicks,
    };
    try {
      this.onSpawn?.(spawn);
    } catch {
      // The caller's bookkeeping must not fail the run.
    }
    publishProviderSpawn(spawn);
  }
}

/** Kills the process groups a dead worker's run left behind and reports the death as `driver_crashed`. */
async function reportDeath(pool: PoolContext, run: WorkerRun, error: unknown): Promise<DriverResult> {
  const { input, threadId, watchdogFired } = run;
  const killedGroups = killLeftovers(run.children.values());
  pool.counters.orphanGroupsKilled += killedGroups.length;
  await waitUntilStopped(killedGroups);
  const cause = watchdogFired
    ? `terminated by the watchdog (${describeThrown(run.kill.signal.reason)})`
    : describeThrown(error);
  const detail =
    `worker thread ${threadId ?? '?'} running ${input.driver} run ${input.runId} failed: ${cause}` +
    (killedGroups.length > 0 ? `; killed orphaned process groups ${killedGroups.join(', ')}` : '');
  pool.emit({ type: 'worker_died', ...runBase(input), threadId, killedGroups, detail });
  return driverFailure('driver_crashed', watchdogFired ? 'worker_watchdog' : 'worker_died', detail);
}

function parseReply(reply: unknown): DriverResult {
  const result = DriverResult.safeParse(reply);
  if (!result.success) {
    return driverFailure(
      'driver_crashed',
      'worker_reply_invalid',
      `worker replied with an invalid DriverResult: ${describeIssues(result.error)}`,
      { path: zodIssue('worker_reply_invalid', result.error).path },
    );
  }
  return result.data;
}
