import { CodedError, type CodedErrorOptions } from '../base/index.js';
// The error modules of recovery/ and store/ and the statechart's context module, not their barrels:
// this file is on the path of every CLI command that reports a code, and the barrels load LMDB, the
// statechart and every schema.
import { RECOVERY_FINDING_CODES, type Finding as FindingOf } from '../recovery/errors.js';
import { STORE_ERROR_CODES, StoreError, type StoreErrorCode } from '../store/errors.js';
import { REJECTION_REASONS } from '../machines/task-context.js';

const LISTED_CODES = [
  // refusals of events
  'not_allowed',
  'invalid_event',
  'invalid_transition',
  'generation_mismatch',
  'idempotency_conflict',
  'task_not_found',
  'task_exists',
  'invalid_spec',
  'stage_unknown',
  'goal_revision_mismatch',
  // what the statechart records when it retains an event without acting on it (machines/task-context.ts)
  ...REJECTION_REASONS,
  // an operator DecisionRequest (`Supervisor.openRequest`) that does not parse, or that asks
  // another question under an id the Task already has
  'invalid_request',
  'request_exists',
  // Effects: an adapter the spec names is not registered; an adapter answered what does not parse
  'effect_adapter_unknown',
  'effect_answer_invalid',
  // boot and doctor findings: recovery's (recovery/errors.ts)
  ...RECOVERY_FINDING_CODES,
  // the store's, passed on as they are (HOST_CODE_OF_STORE)
  ...STORE_ERROR_CODES,
  // many Hosts (store/postgres/): another Host serves the Task
  'task_elsewhere',
  // lifecycle
  'invalid_config',
  'env_missing',
  // confinement "bwrap" (the default) and no sandbox can be started on this machine
  'confinement_unavailable',
  'not_serving',
  'invalid_option',
  'boot_failed',
  // the Task was cancelled while frontier work was in flight for it (a run is then cancelled)
  'task_cancelled',
  // a stage with a token or turn budget assigned to a harness that cannot keep it (not Loop v0)
  'budget_unsupported',
  'branch_invalid',
] as const;

/**
 * Error and refusal codes of the Host (kernel/, frontier/), each once. Refusals of an event are
 * returned as data by `send`; these classes are thrown only where a call cannot answer at all
 * (boot failed, not serving, bad spec). Codes are listed in the error table (docs/errors.md).
 */
export const HOST_ERROR_CODES = uniqueCodes(LISTED_CODES);
export type HostErrorCode = (typeof HOST_ERROR_CODES)[number];

/** A list without its repeats, in first-seen order; its type the same tuple, so the codes read in order in the API. */
type Unique<T extends readonly unknown[], Seen extends readonly unknown[] = []> = T extends readonly [
  infer Head,
  ...infer Rest,
]
  ? Unique<Rest, Head extends Seen[number] ? Seen : [...Seen, Head]>
  : Readonly<Seen>;

function uniqueCodes<const T extends readonly string[]>(codes: T): Unique<T> {
  return [...new Set(codes)] as unknown as Unique<T>;
}

const HOST_CODES: ReadonlySet<string> = new Set(HOST_ERROR_CODES);

/** Whether `code` is one of the Host's (a `SendResult`'s code is a string: retained events' codes come from stored events). */
export function isHostErrorCode(code: string): code is HostErrorCode {
  return HOST_CODES.has(code);
}

/** What a boot check or `doctor` found, naming the Task, revision and object involved (recovery/errors.ts). */
export type Finding = FindingOf<HostErrorCode>;

export interface HostErrorOptions extends CodedErrorOptions {
  /** What a failed boot found (every finding; the error's code is the first one's). */
  findings?: Finding[] | undefined;
}

/** What the Host throws where a call cannot answer at all, with its code; a failed boot carries its findings. */
export class HostError extends CodedError<HostErrorCode> {
  /** What boot validation found (the Task, revision and object of each), for `boot_failed` and the codes of damage. */
  readonly findings: Finding[];

  constructor(code: HostErrorCode, message: string, options: HostErrorOptions = {}) {
    super(code, message, options);
    this.findings = options.findings ?? [];
  }
}

/**
 * The Host's code for each of the store's. Total: a new store code does not compile until it is
 * given one here (and docs/errors.md names it).
 */
const HOST_CODE_OF_STORE: Record<StoreErrorCode, HostErrorCode> = {
  revision_conflict: 'revision_conflict',
  identity_conflict: 'identity_conflict',
  format_unknown: 'format_unknown',
  state_locked: 'state_locked',
  state_missing: 'state_missing',
  state_not_directory: 'state_not_directory',
  state_unreadable: 'state_unreadable',
  state_root_shared: 'state_root_shared',
  read_only: 'read_only',
  object_missing: 'object_missing',
  object_corrupt: 'object_corrupt',
  object_invalid: 'object_invalid',
  record_corrupt: 'record_corrupt',
  storage_failed: 'storage_failed',
  storage_corrupt: 'storage_corrupt',
  lease_lost: 'lease_lost',
  state_mirrored: 'state_mirrored',
  journal_failed: 'journal_failed',
  journal_corrupt: 'journal_corrupt',
};

/** The Host's code for a store code. */
export function hostCodeOf(code: StoreErrorCode): HostErrorCode {
  return HOST_CODE_OF_STORE[code];
}

/** A store failure as the Host reports it: its code (`hostCodeOf`), message, path and retryability, the store's error as the cause. */
export function hostErrorOf(error: StoreError, options: Pick<HostErrorOptions, 'findings'> = {}): HostError {
  return new HostError(hostCodeOf(error.code), error.message, {
    ...options,
    path: error.path,
    retryable: error.retryable,
    cause: error,
  });
}

/**
 * Any error a boot step threw, as a HostError: itself, a store failure by `hostErrorOf`, anything
 * else (a defect) `boot_failed` naming it.
 */
export function bootErrorOf(error: unknown): HostError {
  if (error instanceof HostError) return error;
  if (error instanceof StoreError) return hostErrorOf(error);
  return new HostError('boot_failed', error instanceof Error ? error.message : String(error), { cause: error });
}
