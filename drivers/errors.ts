import { CodedError } from '../base/index.js';
import type { AcpFailureCode } from './acp/errors.js';
import type { CodexFailureCode } from './codex/errors.js';
import type { CommandFailureCode } from './command/errors.js';
import type { LoopFailureCode } from './loop/errors.js';

/**
 * Errors of the driver pool's own API (parent side). A driver run never throws: its failures
 * come back as `DriverResult` data (a coarse `kind` from `DRIVER_FAILURE_CODES` and a specific
 * `code`). These classes are only thrown for misuse of the pool itself, in the thread that called it.
 */
export type DriverErrorCode = 'pool_closed' | 'invalid_pool_options';

/** What each thrown code means, and whether trying again can succeed. */
export const DRIVER_ERROR_CODES: Readonly<Record<DriverErrorCode, { retryable: boolean; meaning: string }>> = {
  pool_closed: { retryable: false, meaning: 'run() was called after close(); create a new pool' },
  invalid_pool_options: {
    retryable: false,
    meaning: 'createDriverPool() options failed validation (`path` names the first bad field)',
  },
};

/**
 * The `kind` of a failed `DriverResult`, with its default retryability. Kept beside the thrown codes
 * so the README's table has one source.
 */
export const DRIVER_FAILURE_CODES = {
  timeout: {
    retryable: true,
    meaning:
      'the run exceeded input.timeoutMs, or input.heartbeatMs passed without progress from the agent; its process group was stopped',
  },
  aborted: {
    retryable: false,
    meaning: "the caller's AbortSignal fired (or the pool closed); the process group was stopped",
  },
  spawn_failed: { retryable: false, meaning: 'the provider process could not be started (missing binary, bad cwd)' },
  process_exited: { retryable: true, meaning: 'the provider process died before its protocol finished' },
  protocol_error: { retryable: true, meaning: 'the provider broke its wire protocol' },
  provider_error: { retryable: true, meaning: 'the provider reported an error for the turn / prompt' },
  driver_crashed: {
    retryable: true,
    meaning:
      'the driver threw, returned an invalid result, or its worker thread died (exit, uncaught error, OOM, watchdog); counts toward restart intensity',
  },
  driver_unavailable: {
    retryable: false,
    meaning:
      'restart intensity exceeded for this driver kind, or its module cannot be loaded; see detail for when it reopens',
  },
  invalid_input: { retryable: false, meaning: 'the DriverRunInput failed zod validation; `path` names the field' },
} as const;

/**
 * The specific `code` of a failed `DriverResult` that the pool and its workers produce themselves
 * (the drivers have their own: `ACP_FAILURE_CODES`, `CODEX_FAILURE_CODES`, `COMMAND_FAILURE_CODES`,
 * `LOOP_FAILURE_CODES`).
 */
export const POOL_FAILURE_CODES = {
  invalid_input: 'the DriverRunInput failed zod validation (in the pool, the worker or the driver)',
  worker_task_invalid: 'the worker received a task envelope that does not parse',
  driver_load_failed: "the driver's module cannot be loaded in the worker",
  driver_threw: 'the driver threw instead of returning a DriverResult',
  driver_result_invalid: 'the driver returned something that is not a DriverResult',
  worker_died: 'the worker thread died during the run (exit, uncaught error, out of memory)',
  worker_watchdog: "no result arrived past the run's deadline, grace and watchdog; the thread was terminated",
  worker_reply_invalid: "the worker's reply does not parse as a DriverResult",
  pool_aborted: "the caller's AbortSignal fired, or the pool closed, before the run reached a worker",
  restart_intensity_exceeded: 'too many crashes of this driver kind within the window; the detail says when it reopens',
  pool_failed: "the pool's own supervision of the run threw (a defect)",
  env_missing: 'a variable named in envFrom is not set (or empty) where the provider is spawned; nothing was started',
} as const;
export type PoolFailureCode = keyof typeof POOL_FAILURE_CODES;

/** Codes every driver gives a run its limits ended (drivers/run-deadline.ts), beside its own `<driver>_timeout`. */
export const RUN_LIMIT_CODES = {
  heartbeat_timeout:
    'input.heartbeatMs passed without progress from the agent (any output, a protocol message); the run was stopped like one past its deadline',
} as const;
export type RunLimitCode = keyof typeof RUN_LIMIT_CODES;

/** Every specific code a failed `DriverResult` can carry beside its `kind`. */
export type DriverFailureCode =
  PoolFailureCode | RunLimitCode | AcpFailureCode | CodexFailureCode | CommandFailureCode | LoopFailureCode;

/** Base class for errors thrown by the pool's API; `code` is stable, `retryable` tells callers whether to try again. */
export class DriverError extends CodedError<DriverErrorCode> {
  constructor(code: DriverErrorCode, message: string, options: { path?: string | undefined } = {}) {
    super(code, message, { path: options.path, retryable: DRIVER_ERROR_CODES[code].retryable });
  }
}
