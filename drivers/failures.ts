import type { z } from 'zod';
import type { DriverFailureKind, DriverResult, HarnessRunReceipt } from './receipt.js';
import { DRIVER_FAILURE_CODES } from './errors.js';

/** The failed branch of `DriverResult`. */
export type DriverFailure = Extract<DriverResult, { ok: false }>;

/** Builds a failed `DriverResult` with the kind's default retryability unless one is given. */
export function driverFailure(
  kind: DriverFailureKind,
  detail: string,
  options: { receipt?: HarnessRunReceipt; retryable?: boolean } = {},
): DriverFailure {
  const failure: DriverFailure = {
    ok: false,
    kind,
    retryable: options.retryable ?? DRIVER_FAILURE_CODES[kind].retryable,
    detail,
  };
  if (options.receipt !== undefined) failure.receipt = options.receipt;
  return failure;
}

/** Renders zod issues as `path: message` pairs so the offending field is named in plain text. */
export function formatZodIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}

/** `invalid_input` for a `DriverRunInput` that failed to parse. */
export function invalidInputFailure(error: z.ZodError): DriverFailure {
  return driverFailure('invalid_input', `invalid driver run input: ${formatZodIssues(error)}`);
}

/** Message of anything thrown, without trusting its shape (worker errors arrive as plain objects). */
export function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) {
    const code = (thrown as NodeJS.ErrnoException).code;
    return code !== undefined ? `${code}: ${thrown.message}` : thrown.message;
  }
  return String(thrown);
}
