import type { ZodError } from 'zod';
import { describeIssues, zodIssue } from '../base/index.js';
import type { DriverFailureKind, DriverResult, HarnessRunReceipt } from './receipt.js';
import { DRIVER_FAILURE_CODES, type DriverFailureCode } from './errors.js';

/** The failed branch of `DriverResult`. */
export type DriverFailure = Extract<DriverResult, { ok: false }>;

/**
 * Builds a failed `DriverResult`: the coarse `kind` (with its default retryability unless one is
 * given), the specific `code`, and a `detail` for people that does not repeat the code.
 */
export function driverFailure(
  kind: DriverFailureKind,
  code: DriverFailureCode,
  detail: string,
  options: { receipt?: HarnessRunReceipt; retryable?: boolean; path?: string } = {},
): DriverFailure {
  const failure: DriverFailure = {
    ok: false,
    kind,
    code,
    retryable: options.retryable ?? DRIVER_FAILURE_CODES[kind].retryable,
    detail,
  };
  if (options.path !== undefined) failure.path = options.path;
  if (options.receipt !== undefined) failure.receipt = options.receipt;
  return failure;
}

/** `invalid_input` for a `DriverRunInput` that failed to parse: `path` names the first bad field, `detail` all. */
export function invalidInputFailure(error: ZodError): DriverFailure {
  const { path } = zodIssue('invalid_input', error);
  return driverFailure('invalid_input', 'invalid_input', `invalid driver run input: ${describeIssues(error)}`, {
    path,
  });
}

/**
 * Message of anything thrown, without trusting its shape (worker errors arrive as plain objects),
 * for a failure's `detail`. An errno code (`ENOENT`, `ERR_WORKER_OUT_OF_MEMORY`) is appended in
 * parentheses for people; nothing reads it back (the failure's own `code` is the contract).
 */
export function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) {
    const code = (thrown as NodeJS.ErrnoException).code;
    return code !== undefined ? `${thrown.message} (${code})` : thrown.message;
  }
  return String(thrown);
}
