import { serverCodes, WorldError, type CodeTable } from '../../shared/world-error.js';

/**
 * The codes of World W1's provider, each with whether the same call may succeed later unchanged
 * (docs/errors.md lists them; a test checks it does). The server answers the request codes as
 * `{code, path, message}` with an HTTP status; every one of them is answered before anything is
 * committed, so a refusal proves nothing was performed.
 */
export const PROVIDER_CODES = {
  provider_invalid_request: {
    retryable: false,
    meaning: '400: a body, header or path parameter does not parse; `path` names it',
  },
  provider_route_not_found: { retryable: false, meaning: '404: no such route with this method' },
  provider_body_too_large: { retryable: false, meaning: "413: the body is over the server's limit" },
  provider_target_not_found: {
    retryable: false,
    meaning: '404: the operation or GET names a target that does not exist',
  },
  provider_target_changed: {
    retryable: false,
    meaning: "412: `If-Match` names another version than the target's current ETag",
  },
  provider_idempotency_key_reused: {
    retryable: false,
    meaning: '422: the `Idempotency-Key` was used within the retention window for another body',
  },
  provider_not_found: { retryable: false, meaning: '404: no receipt under this idempotency key or transfer id' },
  provider_lookup_expired: {
    retryable: false,
    meaning: "410: the idempotency key's retention window passed: the provider no longer says what happened",
  },
  provider_storage_failed: {
    retryable: true,
    meaning: '500: the database refused the write (nothing committed) or the read',
  },
  provider_internal_error: {
    retryable: false,
    meaning: '500: an error outside the database call that failed; the request may have been committed',
  },
  ...serverCodes('provider', { line: 'URL line', calls: 'a control or records call' }),
} as const satisfies CodeTable;

export type ProviderCode = keyof typeof PROVIDER_CODES;

/** Why a provider call failed, as data. `retryable` is the code's (`PROVIDER_CODES`) unless given. */
export class ProviderError extends WorldError<ProviderCode> {
  static override readonly codes = PROVIDER_CODES;
}
