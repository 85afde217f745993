import { digestOf, sha256 } from './canonical.js';
import type { StoreDatabases } from './databases.js';
import { StoreError } from './errors.js';
import type { EventStore } from './event-store.js';
import type { NewObject, PreparedObject } from './prepare-object.js';
import { durable } from './record-read.js';
import type { EventRecord, Head, IndexClaim, IndexKind, Projection, StreamWarning } from './records.js';

export interface AppendInput {
  taskId: string;
  /** The revision the caller last saw; 0 for a new stream. */
  expectedRevision: number;
  event: Omit<EventRecord, 'prev'>;
  /** Immutable objects the event references; written (if absent) before the event, in the same commit. */
  objects?: NewObject[];
  /** Objects the caller already passed through `prepareObject` of this store; written like `objects`. */
  prepared?: PreparedObject[];
  /** Artifact bytes, addressed by sha256 of the bytes. */
  blobs?: Uint8Array[];
  /** Identity claims: `request` and `evidence` keys may belong to one Task only. */
  claims?: IndexClaim[];
  projection: Projection;
}

export interface AppendResult {
  revision: number;
  digest: string;
  /** True when an earlier append with the same event id was acknowledged instead of writing. */
  duplicate: boolean;
}

const EXCLUSIVE_CLAIMS: ReadonlySet<IndexKind> = new Set(['request', 'evidence', 'event']);

/** `EventStore.append` (see there) on the store's databases; the caller checked the store is writable. */
export async function appendEvent(
  store: EventStore,
  dbs: StoreDatabases,
  streamWarnAt: number,
  input: AppendInput,
): Promise<AppendResult> {
  const prepared = (input.objects ?? []).map((o) => store.prepareObject(o));
  if (input.prepared) prepared.push(...input.prepared);
  const blobs = (input.blobs ?? []).map((b) => ({ digest: sha256(b), bytes: Buffer.from(b) }));
  const provided = new Set([...prepared.map((p) => p.digest), ...blobs.map((b) => b.digest)]);
  const { taskId, expectedRevision } = input;
  const revision = expectedRevision + 1;

  const result = await durable(
    dbs.env,
    dbs.env.childTransaction((): AppendResult => {
      const head = store.head(taskId);
      const current = head?.revision ?? 0;
      if (current !== expectedRevision) {
        const stored = current > expectedRevision ? store.event(taskId, revision) : undefined;
        if (stored && stored.id === input.event.id) return { revision, digest: digestOf(stored), duplicate: true };
        throw new StoreError(
          'revision_conflict',
          `task ${taskId}: expected revision ${expectedRevision}, head is ${current}`,
          { taskId, expectedRevision, revision: current },
          { retryable: true },
        );
      }
      for (const ref of input.event.refs) {
        if (!provided.has(ref) && !store.hasObject(ref)) {
          throw new StoreError('object_missing', `task ${taskId} revision ${revision} references missing ${ref}`, {
            taskId,
            revision,
            object: ref,
          });
        }
      }
      for (const claim of input.claims ?? []) {
        if (!EXCLUSIVE_CLAIMS.has(claim.kind)) continue;
        const other = store.owners(claim.kind, claim.key).find((owner) => owner !== taskId);
        if (other !== undefined) {
          throw new StoreError('identity_conflict', `${claim.kind} ${claim.key} already belongs to task ${other}`, {
            taskId,
            revision,
            object: claim.key,
            owner: other,
          });
        }
      }
      // Checks done; from here on only writes, so a refused append leaves nothing behind. Each
      // put joins this transaction (its promise is the commit's, awaited by `durable`).
      for (const { digest, text } of prepared)
        if (!dbs.objects.doesExist(digest)) void dbs.objects.put(digest, Buffer.from(text));
      for (const { digest, bytes } of blobs) if (!dbs.blobs.doesExist(digest)) void dbs.blobs.put(digest, bytes);
      const record: EventRecord = { ...input.event, prev: head?.digest ?? null };
      const digest = digestOf(record);
      void dbs.events.put([taskId, revision], record);
      void dbs.heads.put(taskId, { revision, digest } satisfies Head);
      for (const claim of input.claims ?? []) {
        void dbs.indexes.put(
          [claim.kind, claim.key, taskId],
          claim.digest === undefined ? { revision } : { revision, digest: claim.digest },
        );
      }
      void dbs.projections.put(taskId, input.projection);
      if (revision === streamWarnAt) {
        const warning: StreamWarning = { taskId, revision, threshold: streamWarnAt, at: input.event.at };
        void dbs.meta.put(['warning', taskId], warning);
      }
      return { revision, digest, duplicate: false };
    }),
    { taskId, revision },
  );
  return result;
}
