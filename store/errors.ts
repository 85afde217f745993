import { CodedError, type CodedErrorOptions } from '../base/index.js';

/**
 * Errors of the store. String codes are the contract (README, "Error codes"); messages are for
 * people. `retryable` says whether the same call may succeed later without changing anything.
 */
export const STORE_ERROR_CODES = [
  'revision_conflict',
  'identity_conflict',
  'format_unknown',
  'state_locked',
  'state_missing',
  'state_not_directory',
  'state_unreadable',
  'state_root_shared',
  'read_only',
  'object_missing',
  'object_corrupt',
  'object_invalid',
  'record_corrupt',
  'storage_failed',
  'storage_corrupt',
  'lease_lost',
  'state_mirrored',
  'journal_failed',
  'journal_corrupt',
] as const;
export type StoreErrorCode = (typeof STORE_ERROR_CODES)[number];

/** A store failure: its code, the record or object involved (`details`), and the offending field (`path`) of an object that fails its schema. */
export class StoreError extends CodedError<StoreErrorCode> {
  constructor(
    code: StoreErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    options: CodedErrorOptions = {},
  ) {
    super(code, message, options);
  }
}
