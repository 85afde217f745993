import type { EventRecord, IndexClaim, Projection } from './records.js';

/**
 * One append as the authority commits it: everything the local store is about to write, already
 * checked against the local copy (the mirror) and named (the record, its digest, the objects'
 * canonical text and digests).
 */
export interface AuthorityCommit {
  taskId: string;
  expectedRevision: number;
  revision: number;
  record: EventRecord;
  digest: string;
  objects: ReadonlyArray<{ digest: string; text: string }>;
  blobs: ReadonlyArray<{ digest: string; bytes: Uint8Array }>;
  /** Identity claims; an `exclusive` one may belong to one Task only. */
  claims: ReadonlyArray<IndexClaim & { exclusive: boolean }>;
  projection: Projection;
}

/**
 * Where a store's appends are decided when several Hosts share one history (store/postgres/): the
 * local LMDB store becomes a mirror of the Tasks this Host owns, written only after the authority
 * committed. `commit` resolves once the append is durable there (`duplicate`, with the stored
 * digest, when the same event id is already stored at that revision: the local store takes that
 * record when it is the very one it was about to write, and answers `storage_failed` otherwise, so
 * the Host copies the Task again), and throws a StoreError otherwise: `lease_lost` (another Host
 * took the Task: nothing was written), `revision_conflict`, `identity_conflict`, or
 * `storage_failed` (retryable; the append may or may not have been committed — the Host reloads
 * the Task from the authority before it writes again).
 */
export interface StoreAuthority {
  commit(append: AuthorityCommit): Promise<{ duplicate: false } | { duplicate: true; digest: string }>;
  /**
   * Stores objects and blobs ahead of the event that will reference them (`EventStore.putObjects`):
   * an append sends only the objects it carries, and a Host copying the Task reads the others
   * from here. Content-addressed, so idempotent and not fenced. Throws `storage_failed` (retryable).
   */
  putObjects(
    objects: ReadonlyArray<{ digest: string; text: string }>,
    blobs: ReadonlyArray<{ digest: string; bytes: Uint8Array }>,
  ): Promise<void>;
}
