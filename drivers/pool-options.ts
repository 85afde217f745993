import { z } from 'zod';
import type { Clock } from './clock.js';
import { RUN_GUARD_MARGIN_MS } from './run-deadline.js';
import type { DriverKind } from './receipt.js';
import type { KindSupervision } from './restart-intensity.js';

/** What the pool reports as it goes (for logs, inspection and tests that wait on events). */
export type DriverPoolEvent =
  | { type: 'run_started'; runId: string; driver: DriverKind; threadId: number }
  | { type: 'child_spawned'; runId: string; driver: DriverKind; pid: number }
  | { type: 'leftovers_killed'; runId: string; driver: DriverKind; pids: number[] }
  | { type: 'backoff'; runId: string; driver: DriverKind; waitMs: number }
  | { type: 'run_crashed'; runId: string; driver: DriverKind; code: string; detail: string; tripped: boolean }
  | {
      type: 'worker_died';
      runId: string;
      driver: DriverKind;
      threadId: number | null;
      killedGroups: number[];
      detail: string;
    }
  | { type: 'driver_unavailable'; runId: string; driver: DriverKind; detail: string }
  | { type: 'bad_worker_message'; runId: string; driver: DriverKind; detail: string }
  | { type: 'pool_error'; detail: string };

const nonNegativeInt = z.number().int().nonnegative();

export const DriverPoolOptions = z.object({
  /** Threads kept alive (warm) even when idle. Default 1. */
  minThreads: nonNegativeInt.optional(),
  /** Concurrent runs (one run per thread). Default 4. */
  maxThreads: z.number().int().positive().optional(),
  /** How long a thread above `minThreads` may idle before it ends. Default 30 000. */
  idleTimeoutMs: nonNegativeInt.optional(),
  /** The ES module whose default export handles a run (absolute path or file URL); see `createWorkerHandler`. Default: this folder's `worker.js`. */
  workerFile: z.union([z.string().min(1), z.instanceof(URL)]).optional(),
  /** Restart intensity per driver kind (OTP MaxR / MaxT). Default 3 within 60 000 ms. */
  intensity: z.object({ maxRestarts: nonNegativeInt, withinMs: z.number().int().positive() }).optional(),
  /** Backoff between restarts of a kind. Default 250 ms doubling to 10 000 ms. */
  backoff: z.object({ initialMs: nonNegativeInt, maxMs: nonNegativeInt }).optional(),
  /**
   * Slack after `timeoutMs + graceMs` (or after an abort's `graceMs`) before a worker that has not
   * returned is terminated and its process groups killed. Default `RUN_GUARD_MARGIN_MS` (10 000),
   * the margin every guard outside a driver keeps (drivers/run-deadline.ts).
   */
  watchdogMs: nonNegativeInt.optional(),
  /** V8 limits per worker thread (an out-of-memory worker fails only its run). */
  resourceLimits: z
    .object({
      maxOldGenerationSizeMb: z.number().positive().optional(),
      maxYoungGenerationSizeMb: z.number().positive().optional(),
      codeRangeSizeMb: z.number().positive().optional(),
      stackSizeMb: z.number().positive().optional(),
    })
    .optional(),
  clock: z
    .custom<Clock>((value) => typeof value === 'object' && value !== null && 'now' in value && 'sleep' in value, {
      message: 'expected a Clock { now(), sleep(ms, signal) }',
    })
    .optional(),
  onEvent: z
    .custom<(event: DriverPoolEvent) => void>((value) => typeof value === 'function', {
      message: 'expected a function',
    })
    .optional(),
});
export type DriverPoolOptions = z.input<typeof DriverPoolOptions>;

export const POOL_DEFAULTS = {
  minThreads: 1,
  maxThreads: 4,
  idleTimeoutMs: 30_000,
  intensity: { maxRestarts: 3, withinMs: 60_000 },
  backoff: { initialMs: 250, maxMs: 10_000 },
  watchdogMs: RUN_GUARD_MARGIN_MS,
} as const;

/** A snapshot of the pool for health checks and tests. */
export interface DriverPoolStats {
  threads: number;
  queued: number;
  /** Runs accepted and not yet settled (including those waiting out a backoff). */
  running: number;
  completed: number;
  workersCreated: number;
  workersDestroyed: number;
  crashes: number;
  /** Process groups killed because a worker died holding them. */
  orphanGroupsKilled: number;
  /** Process groups a driver left running after it returned, killed by its worker. */
  leftoverGroupsKilled: number;
  drivers: Record<DriverKind, KindSupervision>;
}
