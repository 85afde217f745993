import { performance } from 'node:perf_hooks';

/**
 * One deadline bounds a harness run, and the driver owns it: `input.timeoutMs` after the run starts
 * it stops its provider (politely, then the process group after `input.graceMs`), and, when
 * `input.heartbeatMs` is set, it does the same once that long passes without progress from the
 * agent (Temporal's heartbeat timeout). The guards outside the driver only catch a driver that
 * failed to return; each is derived here, one margin past the bound inside it, so they nest in one
 * order: the driver, then the pool's watchdog, then the Runtime job's timeout.
 */

/**
 * The slack each guard outside a driver allows past the bound inside it. It covers a driver's
 * polite stop (an interrupt answered, stdin closed, SIGTERM, SIGKILL: each waits up to `graceMs`)
 * and the reply crossing the worker thread.
 */
export const RUN_GUARD_MARGIN_MS = 10_000;

/** The part of a run's input its bounds are computed from. */
export interface RunBounds {
  timeoutMs: number;
  graceMs: number;
}

/** When a driver that honours its deadline has stopped its provider: the deadline, then the grace. */
export function driverBoundMs(run: RunBounds): number {
  return run.timeoutMs + run.graceMs;
}

/** When the pool's watchdog terminates a worker that has not replied (`watchdogMs`: the pool's margin). */
export function watchdogBoundMs(run: RunBounds, watchdogMs: number = RUN_GUARD_MARGIN_MS): number {
  return driverBoundMs(run) + watchdogMs;
}

/** The Runtime job's timeout for a harness run: one margin past the pool's watchdog. */
export function harnessJobTimeoutMs(run: RunBounds): number {
  return watchdogBoundMs(run) + RUN_GUARD_MARGIN_MS;
}

/** Which of a run's limits ended it. */
export type RunLimit = 'timeout' | 'heartbeat';

/** A run's running limits: `progress()` on every sign of life from the agent, `clear()` when the run ends. */
export interface RunLimits {
  progress(): void;
  clear(): void;
}

/**
 * Starts a run's limits: `onLimit('timeout')` `run.timeoutMs` after now, and, when
 * `run.heartbeatMs` is set, `onLimit('heartbeat')` once that long passes without `progress()`.
 * At most one of them fires, once; `clear()` stops both. `progress()` only records the time, so an
 * agent that floods its output costs no timer per line.
 */
export function startRunLimits(
  run: { timeoutMs: number; heartbeatMs?: number | undefined },
  onLimit: (limit: RunLimit) => void,
): RunLimits {
  let done = false;
  let lastProgress = performance.now();
  let heartbeat: NodeJS.Timeout | undefined;
  const fire = (limit: RunLimit): void => {
    if (done) return;
    done = true;
    clear();
    onLimit(limit);
  };
  const deadline = setTimeout(() => fire('timeout'), run.timeoutMs);
  const interval = run.heartbeatMs;
  if (interval !== undefined) {
    const check = (): void => {
      const quiet = performance.now() - lastProgress;
      if (quiet >= interval) fire('heartbeat');
      else heartbeat = setTimeout(check, interval - quiet);
    };
    heartbeat = setTimeout(check, interval);
  }
  function clear(): void {
    done = true;
    clearTimeout(deadline);
    clearTimeout(heartbeat);
  }
  return {
    progress: () => {
      lastProgress = performance.now();
    },
    clear,
  };
}
