import { pathToFileURL } from 'node:url';
import { MessageChannel, SHARE_ENV, receiveMessageOnPort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { killLeftovers, waitUntilStopped } from '../os/index.js';
import { systemClock } from './clock.js';
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
  const parsed = DriverPoolOptions.safeParse(options);
  if (!parsed.success)
    throw new DriverError('invalid_pool_options', `invalid driver pool options: ${describeIssues(parsed.error)}`, {
      path: zodIssue('invalid_pool_options', parsed.error).path,
    });
  const o = parsed.data;
  const clock = o.clock ?? systemClock;
  const watchdogMs = o.watchdogMs ?? POOL_DEFAULTS.watchdogMs;
  const intensity = new RestartIntensity({
    ...(o.intensity ?? POOL_DEFAULTS.intensity),
    backoff: o.backoff ?? POOL_DEFAULTS.backoff,
    clock,
  });
  const workerFile = o.workerFile ?? new URL('./worker.js', import.meta.url);
  const piscina = new Piscina({
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
  const counters = {
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

  const closing = new AbortController();
  const inflight = new Set<Promise<DriverResult>>();
  let closed: Promise<void> | undefined;

  async function dispatch(
    input: DriverRunInput,
    stop: AbortSignal,
    onSpawn: DriverRunOptions['onSpawn'],
  ): Promise<DriverResult> {
    const base = { runId: input.runId, driver: input.driver };
    const { port1, port2 } = new MessageChannel();
    const children = new Map<number, { pid: number; startTicks: number; exited: boolean }>();
    const kill = new AbortController();
    let threadId: number | null = null;
    let watchdog: AbortController | undefined;
    let watchdogFired = false;
    const arm = (ms: number): void => {
      watchdog?.abort();
      const current = new AbortController();
      watchdog = current;
      void clock.sleep(ms, current.signal).then((elapsed) => {
        if (!elapsed || watchdog !== current) return;
        watchdogFired = true;
        kill.abort(new Error(`no result ${ms} ms past the run's deadline`));
      });
    };
    const handle = (raw: unknown): void => {
      const message = WorkerMessage.safeParse(raw);
      if (!message.success) return emit({ type: 'bad_worker_message', ...base, detail: describeIssues(message.error) });
      const m = message.data;
      if (m.type === 'started') {
        threadId = m.threadId;
        emit({ type: 'run_started', ...base, threadId });
        // Aborted already: the driver stops at once, so only the grace counts, not the deadline.
        arm(stop.aborted ? input.graceMs + watchdogMs : watchdogBoundMs(input, watchdogMs));
      } else if (m.type === 'child') {
        children.set(m.pid, { pid: m.pid, startTicks: m.startTicks, exited: false });
        emit({ type: 'child_spawned', ...base, pid: m.pid });
        const spawn: ProviderSpawn = {
          ...base,
          ...(input.jobId !== undefined ? { jobId: input.jobId } : {}),
          pid: m.pid,
          startTicks: m.startTicks,
        };
        try {
          onSpawn?.(spawn);
        } catch {
          // The caller's bookkeeping must not fail the run.
        }
        publishProviderSpawn(spawn);
      } else if (m.type === 'child_exit') {
        const child = children.get(m.pid);
        if (child !== undefined) child.exited = true;
      } else {
        counters.leftoverGroupsKilled += m.pids.length;
        emit({ type: 'leftovers_killed', ...base, pids: m.pids });
      }
    };
    port1.on('message', handle);
    const onStop = (): void => {
      const abort: ParentMessage = { type: 'abort', reason: describeThrown(stop.reason) };
      port1.postMessage(abort);
      if (threadId !== null) arm(input.graceMs + watchdogMs);
    };
    stop.addEventListener('abort', onStop, { once: true });
    if (stop.aborted) onStop();

    let reply: unknown;
    let death: { error: unknown } | undefined;
    try {
      const task: TaskEnvelope = { input, port: port2 };
      reply = await piscina.run(task, { transferList: [port2], signal: kill.signal });
    } catch (error) {
      death = { error };
    } finally {
      stop.removeEventListener('abort', onStop);
      watchdog?.abort();
      watchdog = undefined;
      // Messages posted before the worker replied or died are queued on port1 already.
      for (let m = receiveMessageOnPort(port1); m !== undefined; m = receiveMessageOnPort(port1)) handle(m.message);
      port1.close();
    }

    if (death !== undefined) {
      const killedGroups = killLeftovers(children.values());
      counters.orphanGroupsKilled += killedGroups.length;
      await waitUntilStopped(killedGroups);
      const cause = watchdogFired
        ? `terminated by the watchdog (${describeThrown(kill.signal.reason)})`
        : describeThrown(death.error);
      const detail =
        `worker thread ${threadId ?? '?'} running ${input.driver} run ${input.runId} failed: ${cause}` +
        (killedGroups.length > 0 ? `; killed orphaned process groups ${killedGroups.join(', ')}` : '');
      emit({ type: 'worker_died', ...base, threadId, killedGroups, detail });
      return driverFailure('driver_crashed', watchdogFired ? 'worker_watchdog' : 'worker_died', detail);
    }
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

  async function supervise(
    raw: DriverRunInputIn,
    signal: AbortSignal | undefined,
    onSpawn: DriverRunOptions['onSpawn'],
  ): Promise<DriverResult> {
    const parsedInput = DriverRunInput.safeParse(raw);
    if (!parsedInput.success) return invalidInputFailure(parsedInput.error);
    const input = parsedInput.data;
    const base = { runId: input.runId, driver: input.driver };
    const stop = signal !== undefined ? AbortSignal.any([signal, closing.signal]) : closing.signal;
    for (;;) {
      if (stop.aborted)
        return driverFailure(
          'aborted',
          'pool_aborted',
          `aborted before reaching a worker: ${describeThrown(stop.reason)}`,
        );
      const gate = intensity.gate(input.driver);
      if (gate.state === 'unavailable') {
        emit({ type: 'driver_unavailable', ...base, detail: gate.detail });
        return driverFailure('driver_unavailable', 'restart_intensity_exceeded', gate.detail);
      }
      if (gate.waitMs === 0) break;
      emit({ type: 'backoff', ...base, waitMs: gate.waitMs });
      await clock.sleep(gate.waitMs, stop);
    }
    const result = await dispatch(input, stop, onSpawn);
    if (!result.ok && result.kind === 'driver_crashed') {
      counters.crashes++;
      const tripped = intensity.recordCrash(input.driver);
      emit({ type: 'run_crashed', ...base, code: result.code, detail: result.detail, tripped });
    }
    return result;
  }

  return {
    run(input, runOptions = {}) {
      if (closing.signal.aborted) return Promise.reject(new DriverError('pool_closed', 'the driver pool is closed'));
      const settled = supervise(input, runOptions.signal, runOptions.onSpawn)
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
