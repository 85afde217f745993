import { deserialize, serialize } from 'node:v8';
import { z } from 'zod';
import { zodIssue } from '../../base/index.js';
import type { StoreDatabases } from '../databases.js';
import { StoreError } from '../errors.js';
import { EventRecord, IndexEntry, IndexKind, Projection, StreamWarning, type Head } from '../records.js';

/**
 * One transition as the journal holds it: everything its LMDB transaction writes, so that the
 * transaction can be applied again from the journal alone. Serialized with node:v8's structured
 * clone, whose format Node documents as backward compatible (safe to store): it keeps what the
 * store's msgpack keeps and JSON would not (`undefined` members, as in XState's persisted
 * snapshot; bytes), so a transition applied from the journal at boot is the value applied at
 * admission.
 */
export interface JournalEntry {
  taskId: string;
  revision: number;
  record: EventRecord;
  digest: string;
  objects: Array<[digest: string, text: string]>;
  blobs: Array<[digest: string, bytes: Uint8Array]>;
  claims: Array<[kind: IndexKind, key: string, entry: IndexEntry]>;
  projection: Projection;
  warning?: StreamWarning;
}

const Entry = z.object({
  taskId: z.string().min(1),
  revision: z.number().int().positive(),
  record: EventRecord,
  digest: z.string(),
  objects: z.array(z.tuple([z.string(), z.string()])),
  blobs: z.array(z.tuple([z.string(), z.instanceof(Uint8Array)])),
  claims: z.array(z.tuple([IndexKind, z.string(), IndexEntry])),
  projection: Projection,
  warning: StreamWarning.optional(),
});

/** Where LMDB keeps the applied journal position, written in the same transaction as each entry. */
export const APPLIED_KEY: [string, string] = ['journal', 'applied'];

export function encodeEntry(entry: JournalEntry): Uint8Array {
  return serialize(entry);
}

/** Decodes a journal record's payload; one that does not parse is `journal_corrupt` (its CRC held: a writer's bug, not the disk). */
export function decodeEntry(payload: Uint8Array, seq: number): JournalEntry {
  let value: unknown;
  try {
    value = deserialize(payload);
  } catch (error) {
    throw new StoreError('journal_corrupt', `journal record ${seq} cannot be decoded: ${(error as Error).message}`);
  }
  const parsed = Entry.safeParse(value);
  if (!parsed.success) {
    const { path, message } = zodIssue('journal_corrupt', parsed.error);
    throw new StoreError('journal_corrupt', `journal record ${seq} is malformed at ${path}: ${message}`, {}, { path });
  }
  return parsed.data as JournalEntry;
}

/** The 32 bytes of a `sha256:<hex>` digest, as a journal record's header carries them. */
export function digestBytes(digest: string): Buffer {
  return Buffer.from(digest.slice('sha256:'.length), 'hex');
}

/**
 * Issues the writes of one entry on LMDB: each object and blob absent, the event, head, claims,
 * projection and warning, and the applied journal position `seq` when it came from the journal.
 * Called inside the caller's transaction (the append's conditional batch on the event's key, or
 * the sync transaction of a replay), so the position and the writes it covers commit together.
 */
export function writeEntry(dbs: StoreDatabases, entry: JournalEntry, seq: number | undefined): void {
  const { taskId, revision, digest } = entry;
  for (const [id, text] of entry.objects) if (!dbs.objects.doesExist(id)) void dbs.objects.put(id, Buffer.from(text));
  for (const [id, bytes] of entry.blobs) if (!dbs.blobs.doesExist(id)) void dbs.blobs.put(id, Buffer.from(bytes));
  void dbs.events.put([taskId, revision], entry.record);
  void dbs.heads.put(taskId, { revision, digest } satisfies Head);
  for (const [kind, key, claimed] of entry.claims) void dbs.indexes.put([kind, key, taskId], claimed);
  void dbs.projections.put(taskId, entry.projection);
  if (entry.warning) void dbs.meta.put(['warning', taskId], entry.warning);
  if (seq !== undefined) void dbs.meta.put(APPLIED_KEY, seq);
}

/** The applied journal position LMDB holds (0 for a root that never had a journal). */
export function appliedPosition(dbs: StoreDatabases): number {
  const value = dbs.meta.get(APPLIED_KEY);
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new StoreError('record_corrupt', `the applied journal position is not a position: ${JSON.stringify(value)}`, {
      object: 'meta journal/applied',
    });
  return value;
}
