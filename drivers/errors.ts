/**
 * Errors of the driver pool's own API (parent side). A driver run never throws: its failures
 * come back as `DriverResult` data (see `DRIVER_FAILURE_CODES`). These classes are only thrown
 * for misuse of the pool itself, in the thread that called it.
 */
export type DriverErrorCode = 'pool_closed' | 'invalid_pool_options';

/** What each thrown code means, and whether trying again can succeed. */
export const DRIVER_ERROR_CODES: Readonly<Record<DriverErrorCode, { retryable: boolean; meaning: string }>> = {
  pool_closed: { retryable: false, meaning: 'run() was called after close(); create a new pool' },
  invalid_pool_options: {
    retryable: false,
    meaning: 'createDriverPool() options failed validation (field path in the message)',
  },
};

/**
 * The `kind` of a failed `DriverResult`, with its default retryability. Kept beside the thrown codes
 * so the README's table has one source.
 */
export const DRIVER_FAILURE_CODES = {
  timeout: { retryable: true, meaning: 'the run exceeded input.timeoutMs; its process group was stopped' },
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
  invalid_input: { retryable: false, meaning: 'the DriverRunInput failed zod validation; detail names the field path' },
} as const;

/** Base class for errors thrown by the pool's API; `code` is stable, `retryable` tells callers whether to try again. */
export class DriverError extends Error {
  readonly code: DriverErrorCode;
  readonly retryable: boolean;

  constructor(code: DriverErrorCode, message: string) {
    super(message);
    this.name = 'DriverError';
    this.code = code;
    this.retryable = DRIVER_ERROR_CODES[code].retryable;
  }
}
