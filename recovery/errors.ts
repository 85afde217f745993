/**
 * What recovery finds in a state root (docs/design.md, invariant 7). Verification never throws for
 * damage: each check that fails is a finding, returned as data; the Host refuses to serve a root
 * with any (`HostError` in kernel/ carries them), `doctor` lists them.
 */
export const RECOVERY_FINDING_CODES = [
  'stream_gap',
  'stream_corrupt',
  'object_missing',
  'object_corrupt',
  'projection_drift',
  'replay_divergence',
  'identity_conflict',
] as const;
export type RecoveryFindingCode = (typeof RECOVERY_FINDING_CODES)[number];

/**
 * What a boot check or `doctor` found, naming the Task, revision and object involved. Recovery's
 * findings carry its own codes; the Host's (kernel/errors.ts) are the same shape over its wider
 * code list, so a recovery finding is one of the Host's as it is.
 */
export interface Finding<Code extends string = RecoveryFindingCode> {
  code: Code;
  taskId?: string;
  revision?: number;
  object?: string;
  /** The damaged page of `lmdb/data.mdb` (`storage_corrupt`): its number, its kind and the tree it is in. */
  page?: { number: number; kind: string; tree: string };
  message: string;
}
