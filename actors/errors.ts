import type { Finding as FindingOf, RecoveryFindingCode } from '../recovery/index.js';

/**
 * Error and refusal codes of the Host (actors/). Refusals of an event are returned as data by
 * `send`; these classes are thrown only where a call cannot answer at all (boot failed, not
 * serving, bad spec). Codes are listed in the README's error table.
 */
export type HostErrorCode =
  // refusals and rejections of events
  | 'not_allowed'
  | 'invalid_event'
  | 'invalid_transition'
  | 'generation_mismatch'
  | 'idempotency_conflict'
  | 'task_not_found'
  | 'task_exists'
  | 'invalid_spec'
  | 'stale_assignment'
  | 'missing_artifact'
  | 'context_mismatch'
  | 'verification_failed'
  // boot and doctor findings: recovery's (recovery/errors.ts) and the store's that stop a boot
  | RecoveryFindingCode
  | 'format_unknown'
  | 'state_locked'
  | 'state_missing'
  | 'storage_failed'
  // lifecycle
  | 'harness_unknown'
  | 'not_serving'
  | 'invalid_option'
  | 'boot_failed';

/** What a boot check or `doctor` found, naming the Task, revision and object involved (recovery/errors.ts). */
export type Finding = FindingOf<HostErrorCode>;

export class HostError extends Error {
  override readonly name = 'HostError';
  constructor(
    readonly code: HostErrorCode,
    message: string,
    readonly findings: Finding[] = [],
    readonly retryable = false,
  ) {
    super(message);
  }
}

/** Formats a zod issue path the way every boundary reports it: `data.evidence.completion.json`. */
export function issuePath(path: ReadonlyArray<PropertyKey>): string {
  return path.map(String).join('.') || '(root)';
}
