import { boundary } from '../../shared/http-boundary.js';
import type { ProviderCode } from './provider-error.js';

// The server's request boundary (workloads/shared/http-boundary.ts) under the provider's codes.

export const { refuse, parse, readJson, storage, listener } = boundary<ProviderCode>({
  invalid: 'provider_invalid_request',
  tooLarge: 'provider_body_too_large',
  storageFailed: 'provider_storage_failed',
  internal: 'provider_internal_error',
  bodyLimit: 1024 * 1024,
});

/** `If-Match` as a version: the ETag's quotes (and a weak `W/`) are not part of it. */
export const matchValue = (header: string) => header.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
