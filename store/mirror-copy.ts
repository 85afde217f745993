import { digestOf } from './canonical.js';
import type { StoreDatabases } from './databases.js';
import { StoreError } from './errors.js';
import { durable } from './record-read.js';
import type { EventRecord, Head, IndexEntry, IndexKind, Projection } from './records.js';

/** One Task as the authority holds it, to be copied into a mirror (`EventStore.copyIn`). */
export interface TaskCopyIn {
  taskId: string;
  /** Events after the mirror's head, in revision order. */
  events: ReadonlyArray<{ revision: number; digest: string; record: EventRecord }>;
  projection: Projection | undefined;
  objects: ReadonlyArray<{ digest: string; bytes: Uint8Array }>;
  blobs: ReadonlyArray<{ digest: string; bytes: Uint8Array }>;
  claims: ReadonlyArray<{ kind: IndexKind; key: string; entry: IndexEntry }>;
}

export const MAX_REVISION = Number.MAX_SAFE_INTEGER;

/** `EventStore.copyIn` (see there) after the mirror's `head`; the caller checked the store is writable. */
export async function copyIntoMirror(
  dbs: StoreDatabases,
  mirrorHead: Head | undefined,
  copy: TaskCopyIn,
): Promise<void> {
  const { taskId } = copy;
  let head = mirrorHead;
  for (const { revision, digest, record } of copy.events) {
    const expected = (head?.revision ?? 0) + 1;
    if (revision !== expected || record.prev !== (head?.digest ?? null) || digestOf(record) !== digest)
      throw new StoreError(
        'record_corrupt',
        `task ${taskId} revision ${revision} from the authority does not continue this store's stream at ${expected - 1}`,
        { taskId, revision },
      );
    head = { revision, digest };
  }
  await durable(
    dbs.env,
    dbs.env.transaction(() => {
      for (const { digest, bytes } of copy.objects)
        if (!dbs.objects.doesExist(digest)) void dbs.objects.put(digest, Buffer.from(bytes));
      for (const { digest, bytes } of copy.blobs)
        if (!dbs.blobs.doesExist(digest)) void dbs.blobs.put(digest, Buffer.from(bytes));
      for (const { revision, record } of copy.events) void dbs.events.put([taskId, revision], record);
      if (head) void dbs.heads.put(taskId, head);
      for (const { kind, key, entry } of copy.claims) void dbs.indexes.put([kind, key, taskId], entry);
      if (copy.projection) void dbs.projections.put(taskId, copy.projection);
    }),
    { taskId },
  );
}

/** `EventStore.forget` (see there); the caller checked the store is writable. */
export async function forgetInMirror(dbs: StoreDatabases, taskId: string): Promise<void> {
  const claims = [...dbs.indexes.getKeys({ start: ['', '', ''], end: ['\uffff', '', ''] })].filter(
    (key) => key[2] === taskId,
  );
  await durable(
    dbs.env,
    dbs.env.transaction(() => {
      for (const { key } of dbs.events.getRange({ start: [taskId, 0], end: [taskId, MAX_REVISION] }))
        void dbs.events.remove(key);
      void dbs.heads.remove(taskId);
      void dbs.projections.remove(taskId);
      for (const key of claims) void dbs.indexes.remove(key);
      void dbs.meta.remove(['warning', taskId]);
    }),
    { taskId },
  );
}
