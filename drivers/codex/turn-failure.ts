/**
 * `codexErrorInfo` values of a failed turn that a later attempt can overcome (capacity, transport,
 * server faults). Everything else — bad request, unknown model, auth, policy, context window — will
 * fail the same way again.
 */
const RETRYABLE_INFO: ReadonlySet<string> = new Set([
  'serverOverloaded',
  'rateLimitExceeded',
  'internalServerError',
  'flexUnavailable',
  'policyCapacityUnavailable',
  'httpConnectionFailed',
  'responseStreamConnectionFailed',
  'responseStreamDisconnected',
  'responseTooManyFailedAttempts',
]);

/** Whether a turn that failed with this `codexErrorInfo` (a string or a one-key object) is worth retrying. */
export function turnFailureRetryable(codexErrorInfo: unknown): boolean {
  if (typeof codexErrorInfo === 'string') return RETRYABLE_INFO.has(codexErrorInfo);
  if (typeof codexErrorInfo === 'object' && codexErrorInfo !== null) {
    const keys = Object.keys(codexErrorInfo);
    return keys.length === 1 && RETRYABLE_INFO.has(keys[0]!);
  }
  return false;
}
