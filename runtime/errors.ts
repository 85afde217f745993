import type { ZodError } from 'zod';
import { CodedError, describeIssues, zodIssue, type CodedErrorOptions } from '../base/index.js';
import type { ConfineCode } from '../drivers/confine.js';

/**
 * Every code a Runtime call can fail with. Stable strings: the error table (docs/errors.md) documents them and
 * callers branch on them. Confine refusal codes are included so a refused workspace read can be thrown
 * as a `RuntimeError` too.
 */
export type RuntimeErrorCode =
  | 'invalid_dispatch'
  | 'invalid_options'
  | 'job_not_found'
  | 'job_foreign'
  | 'identity_conflict'
  | 'idempotency_conflict'
  | 'executor_unavailable'
  | 'workspace_missing'
  | 'record_corrupt'
  | 'store_open_failed'
  | 'store_write_failed'
  | 'format_unknown'
  | 'runtime_closed'
  | 'registry_unavailable'
  | 'confinement_unavailable'
  | 'merge_conflict'
  | ConfineCode;

const RETRYABLE: ReadonlySet<RuntimeErrorCode> = new Set<RuntimeErrorCode>([
  'executor_unavailable',
  'store_open_failed',
  'store_write_failed',
  'registry_unavailable',
]);

/**
 * Base class of every error the Runtime throws. `code` is the contract; `retryable` says whether the
 * same call may succeed later unchanged (like Restate's terminal vs retryable errors), by default
 * from the code; `path` names the offending input field when a parse failed.
 */
export class RuntimeError extends CodedError<RuntimeErrorCode> {
  constructor(code: RuntimeErrorCode, message: string, options: CodedErrorOptions = {}) {
    super(code, message, { ...options, retryable: options.retryable ?? RETRYABLE.has(code) });
  }
}

/** True when `error` is a `RuntimeError`, optionally with the given code. */
export function isRuntimeError(error: unknown, code?: RuntimeErrorCode): error is RuntimeError {
  return error instanceof RuntimeError && (code === undefined || error.code === code);
}

/** A `RuntimeError` for input that failed to parse: every field in the message, the first one as `path`. */
export function parseError(code: RuntimeErrorCode, error: ZodError, prefix?: string): RuntimeError {
  const { path } = zodIssue(code, error);
  const issues = describeIssues(error);
  return new RuntimeError(code, prefix === undefined ? issues : `${prefix}: ${issues}`, { path });
}

/** Turns a confine refusal (`readArtifact` / `resolveInside` result) into a throwable `RuntimeError`. */
export function confineError(refusal: { code: ConfineCode; detail: string }): RuntimeError {
  return new RuntimeError(refusal.code, refusal.detail, { retryable: false });
}
