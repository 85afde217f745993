/**
 * Errors of the store. String codes are the contract (README, "Error codes"); messages are for
 * people. `retryable` says whether the same call may succeed later without changing anything.
 */
export type StoreErrorCode =
  | 'revision_conflict'
  | 'identity_conflict'
  | 'format_unknown'
  | 'state_locked'
  | 'state_missing'
  | 'read_only'
  | 'object_missing'
  | 'object_corrupt'
  | 'object_invalid'
  | 'record_corrupt'
  | 'store_closed'
  | 'storage_failed';

export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly retryable = false,
  ) {
    super(message);
  }
}
