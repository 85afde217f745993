import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { join } from 'node:path';
import type { ZodType } from 'zod';
import { digestOf, sha256, sha256Bytes } from './canonical.js';
import { StoreError } from './errors.js';
import { checkDataFileTail } from './lmdb-tail.js';
import { isCanonicalObjectBytes, objectMatches, objectText, objectValue, type RawObject } from './object-bytes.js';
import {
  type StoredObject,
  EventRecord,
  Head,
  IndexEntry,
  Projection,
  StreamWarning,
  type IndexClaim,
  type IndexKind,
} from './records.js';
import { enterEnvGate } from './env-gate.js';
import { checkFormat } from './state-root.js';
import { acquireLock } from './state-lock.js';

/** Where lmdb-js keeps the events database's shared msgpack structures (inside that database). */
const EVENT_STRUCTURES = Symbol.for('structures');

/** Zod schema per object kind; bodies are validated when written and again when read. */
export type ObjectKinds = Record<string, ZodType>;

export interface OpenOptions {
  /** State root directory (holds `format.json`, `state.lock` and the `lmdb/` environment). */
  root: string;
  kinds: ObjectKinds;
  /** Open without the lock and refuse writes: for `doctor`, `show`, `list` beside a running service. */
  readOnly?: boolean;
  /** Soft limit: passing it records a warning for the stream (default 10,000 events). */
  streamWarnAt?: number;
  /** Who holds the lock (shown to a second opener). */
  purpose?: string;
}

export interface NewObject {
  kind: string;
  body: unknown;
}

/** An object already validated and named by `prepareObject` (so an append does not do it twice). */
export interface PreparedObject {
  digest: string;
  value: StoredObject;
  /** Its canonical JSON text: what is stored, and what `digest` is the sha256 of. */
  text: string;
}

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

/** Validates an object against its kind (`object_invalid`) and names it: digest of its canonical JSON text. */
export function prepareObject(kinds: ObjectKinds, object: NewObject): PreparedObject {
  const schema = kinds[object.kind];
  if (!schema) throw new StoreError('object_invalid', `unknown object kind ${object.kind}`, { kind: object.kind });
  const parsed = schema.safeParse(object.body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StoreError(
      'object_invalid',
      `${object.kind} at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
      {
        kind: object.kind,
        path: issue?.path,
      },
    );
  }
  const value = { kind: object.kind, body: parsed.data };
  const { text, digest } = objectText(value);
  return { digest, value, text };
}

const MAX_REVISION = Number.MAX_SAFE_INTEGER;
const EXCLUSIVE_CLAIMS: ReadonlySet<IndexKind> = new Set(['request', 'evidence', 'event']);

/**
 * The Host's durable store on LMDB: immutable content-addressed objects, per-Task event streams
 * keyed `[taskId, revision]` and chained by digest, heads, projections and identity indexes.
 *
 * Reads are synchronous. `append` resolves only once its commit is on disk (`flushed`);
 * appends made concurrently share one commit and one sync (lmdb-js batches them), each in its
 * own child transaction so one refused append never takes another with it.
 */
export class EventStore {
  private constructor(
    readonly root: string,
    readonly readOnly: boolean,
    private readonly env: RootDatabase,
    private readonly objects: Database<Buffer, string>,
    /** The same database read as msgpack: objects of roots written before the canonical-bytes layout. */
    private readonly legacyObjects: Database<unknown, string>,
    private readonly blobs: Database<Buffer, string>,
    private readonly events: Database<unknown, [string, number]>,
    private readonly heads: Database<unknown, string>,
    private readonly projections: Database<unknown, string>,
    private readonly indexes: Database<unknown, [string, string, string]>,
    private readonly meta: Database<unknown, [string, string]>,
    private readonly kinds: ObjectKinds,
    private readonly streamWarnAt: number,
    private readonly release: () => void,
  ) {}

  /** Opens (creating when writable) the store under `root`. Fails `format_unknown`, `state_locked`, `state_missing`. */
  static open(options: OpenOptions): EventStore {
    const readOnly = options.readOnly ?? false;
    checkFormat(options.root, !readOnly);
    const release = readOnly ? () => {} : acquireLock(options.root, options.purpose ?? 'ordivon');
    try {
      // Opens and closes of one LMDB environment must not overlap across processes (env-gate.ts).
      const leave = enterEnvGate(join(options.root, 'lmdb'));
      let env: RootDatabase;
      try {
        env = open({ path: join(options.root, 'lmdb'), maxDbs: 16, readOnly });
      } finally {
        leave();
      }
      // A data file missing pages its last commit reaches would crash the process with SIGBUS on
      // the first read through the map. The meta pages (read by getStats) are at its start; the
      // rest is checked with pread (see lmdb-tail.ts: the file may legitimately end before LMDB's
      // last page number when the free database lists the final pages).
      const { pageSize, lastPageNumber, lastTxnId } = env.getStats() as {
        pageSize: number;
        lastPageNumber: number;
        lastTxnId: number;
      };
      const dataFile = join(options.root, 'lmdb', 'data.mdb');
      const tail = checkDataFileTail(dataFile, pageSize, lastPageNumber, lastTxnId);
      if (!tail.whole) {
        const leaveAgain = enterEnvGate(join(options.root, 'lmdb'));
        void env.close().finally(leaveAgain);
        throw new StoreError(
          'storage_failed',
          `${dataFile} is truncated: ${tail.size} bytes, ${tail.missingPages} page(s) its last commit reaches are missing before ${tail.lastPageEnd}${tail.problem ? ` (${tail.problem})` : ''}`,
          { root: options.root, object: 'lmdb/data.mdb' },
        );
      }
      const db = <V, K extends Key>(name: string, extra: object = {}) => env.openDB<V, K>(name, { ...extra });
      // Projections (one ~1 kB write per transition) as plain msgpack maps, without record
      // structures: lmdb's default (record definitions inside each value) costs ~25% more to
      // encode and ~40% more to decode for them. Values written either way read back the same
      // here; a raw reader needs `useRecords: false` too (a default one gets Maps).
      const plain = { useRecords: false };
      return new EventStore(
        options.root,
        readOnly,
        env,
        // Objects as their canonical JSON bytes (object-bytes.ts); older roots' msgpack objects
        // are read through a second handle on the same database.
        db('objects', { encoding: 'binary' }),
        db('objects', plain),
        db('blobs', { encoding: 'binary' }),
        // Shared msgpack structures: values ~45% smaller and decoding ~2.7x faster on full scans.
        db('events', { sharedStructuresKey: EVENT_STRUCTURES }),
        db('heads'),
        db('projections', plain),
        db('indexes'),
        db('meta'),
        options.kinds,
        options.streamWarnAt ?? 10_000,
        release,
      );
    } catch (error) {
      release();
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new StoreError('state_missing', `no store at ${options.root}`, { root: options.root });
      }
      throw error;
    }
  }

  /** Waits for pending commits, closes LMDB and releases the state-root lock. */
  async close(): Promise<void> {
    try {
      if (!this.readOnly) await this.env.flushed;
      const leave = enterEnvGate(join(this.root, 'lmdb'));
      try {
        await this.env.close();
      } finally {
        leave();
      }
    } finally {
      this.release();
    }
  }

  // ---- objects -------------------------------------------------------------------------------

  /** Validates an object against its kind and returns its id (digest of canonical `{kind, body}`). */
  prepareObject(object: NewObject): PreparedObject {
    return prepareObject(this.kinds, object);
  }

  /** An object as stored, undecoded when it is in the canonical-bytes layout; undefined when absent. Throws when an older (msgpack) value cannot be decoded. */
  rawObject(digest: string): RawObject | undefined {
    const bytes = this.objects.getBinary(digest);
    if (bytes === undefined) return undefined;
    if (isCanonicalObjectBytes(bytes)) return { bytes };
    return { value: this.legacyObjects.get(digest) };
  }

  /** Reads an object, re-checking its digest and schema. Fails `object_missing` / `object_corrupt`. */
  getObject<T = unknown>(digest: string, kind?: string): { kind: string; body: T } {
    const raw = this.read(() => this.rawObject(digest), 'object_corrupt', { object: digest });
    if (raw === undefined) throw new StoreError('object_missing', `object ${digest} is missing`, { object: digest });
    const value = objectMatches(raw, digest) ? objectValue(raw) : undefined;
    if (!value)
      throw new StoreError('object_corrupt', `object ${digest} does not match its digest`, { object: digest });
    const schema = this.kinds[value.kind];
    if (!schema || !schema.safeParse(value.body).success || (kind && value.kind !== kind)) {
      throw new StoreError('object_corrupt', `object ${digest} is not a valid ${kind ?? value.kind}`, {
        object: digest,
      });
    }
    return value as { kind: string; body: T };
  }

  /**
   * Whether the object or artifact blob `digest` names is stored and hashes to it, without copying
   * its bytes: undefined when neither is stored, `'legacy'` for an object of the older msgpack
   * layout (its digest is taken of the decoded value: read it with `rawObject`). Recovery checks
   * every referenced object this way; on the bench's 1M-event root, `getBinary`'s copy of each
   * value cost as much as the lookup itself.
   */
  storedDigest(digest: string): { in: 'object' | 'blob'; matches: boolean } | 'legacy' | undefined {
    const object = borrowBytes(this.objects, digest);
    if (object !== undefined)
      return isCanonicalObjectBytes(object) ? { in: 'object', matches: sha256Bytes(object) === digest } : 'legacy';
    const blob = borrowBytes(this.blobs, digest);
    return blob === undefined ? undefined : { in: 'blob', matches: sha256Bytes(blob) === digest };
  }

  hasObject(digest: string): boolean {
    return this.objects.doesExist(digest) || this.blobs.doesExist(digest);
  }

  /** Reads artifact bytes, re-checking their digest. */
  getBlob(digest: string): Buffer {
    const bytes = this.blobs.getBinary(digest);
    if (bytes === undefined) throw new StoreError('object_missing', `blob ${digest} is missing`, { object: digest });
    if (sha256(bytes) !== digest)
      throw new StoreError('object_corrupt', `blob ${digest} does not match its digest`, { object: digest });
    return Buffer.from(bytes);
  }

  /** Writes objects ahead of the event that will reference them (idempotent; content-addressed). */
  async putObjects(objects: NewObject[], blobs: Uint8Array[] = []): Promise<string[]> {
    this.writable();
    const prepared = objects.map((o) => this.prepareObject(o));
    // A put inside a transaction callback joins that transaction; its promise is the
    // transaction's commit, awaited here, so each put's own promise is deliberately dropped.
    await this.env.childTransaction(() => {
      for (const { digest, text } of prepared)
        if (!this.objects.doesExist(digest)) void this.objects.put(digest, Buffer.from(text));
      for (const bytes of blobs) {
        const digest = sha256(bytes);
        if (!this.blobs.doesExist(digest)) void this.blobs.put(digest, Buffer.from(bytes));
      }
    });
    await this.env.flushed;
    return [...prepared.map((p) => p.digest), ...blobs.map((b) => sha256(b))];
  }

  // ---- streams -------------------------------------------------------------------------------

  head(taskId: string): Head | undefined {
    const raw = this.heads.get(taskId);
    if (raw === undefined) return undefined;
    return this.parse(Head, raw, { taskId, object: 'head' });
  }

  projection(taskId: string): Projection | undefined {
    const raw = this.projections.get(taskId);
    if (raw === undefined) return undefined;
    return this.parse(Projection, raw, { taskId, object: 'projection' });
  }

  event(taskId: string, revision: number): EventRecord | undefined {
    const raw = this.read(() => this.events.get([taskId, revision]), 'record_corrupt', { taskId, revision });
    return raw === undefined ? undefined : this.parse(EventRecord, raw, { taskId, revision });
  }

  /** Events of one stream in revision order, as stored (unparsed values are parsed by the caller). */
  *rawStream(taskId: string, from = 1): Generator<{ revision: number; value: unknown }> {
    for (const { key, value } of this.events.getRange({ start: [taskId, from], end: [taskId, MAX_REVISION] })) {
      yield { revision: key[1], value };
    }
  }

  *stream(taskId: string, from = 1): Generator<{ revision: number; event: EventRecord }> {
    for (const { revision, value } of this.rawStream(taskId, from)) {
      yield { revision, event: this.parse(EventRecord, value, { taskId, revision }) };
    }
  }

  /**
   * How many records the journal holds, in O(1): LMDB's own entry count for the events database,
   * less the shared-structures record lmdb-js keeps beside the events (skipped by cursors, counted
   * by LMDB). Anything else stored there that is not an event counts too.
   */
  journalSize(): number {
    const entries = (this.events.getStats() as { entryCount: number }).entryCount;
    return entries - (this.events.doesExist(EVENT_STRUCTURES as never) ? 1 : 0);
  }

  /** Every Task id with a head, in key order. */
  taskIds(): string[] {
    return [...this.heads.getKeys()].filter((k): k is string => typeof k === 'string');
  }

  /** Task ids holding an index key; more than one for an exclusive kind is an identity conflict. */
  owners(kind: IndexKind, key: string): string[] {
    return [...this.indexEntries(kind, key)].map((entry) => entry.taskId);
  }

  /** The revision (and fingerprint) with which `taskId` claimed an index key, if it did. */
  claimedAt(kind: IndexKind, key: string, taskId: string): IndexEntry | undefined {
    const raw = this.indexes.get([kind, key, taskId]);
    return raw === undefined ? undefined : IndexEntry.parse(raw);
  }

  /** Every claim of an index kind (or of one key of it), with the Task that holds it, in key order: for the identity checks. */
  *indexEntries(kind: IndexKind, key?: string): Generator<{ key: string; taskId: string }> {
    const range =
      key === undefined
        ? { start: [kind, '', ''], end: [kind, '\uffff', ''] }
        : { start: [kind, key, ''], end: [kind, key, '\uffff'] };
    for (const k of this.indexes.getKeys(range)) yield { key: k[1], taskId: k[2] };
  }

  warnings(): StreamWarning[] {
    return [...this.meta.getRange({ start: ['warning', ''], end: ['warning', '\uffff'] })].map(({ value }) =>
      StreamWarning.parse(value),
    );
  }

  /**
   * Appends one event to a Task's stream with revision compare-and-set.
   *
   * Objects and blobs are written first, then event, head, identity claims and projection, all in
   * one transaction. If the head is not `expectedRevision`: an already stored event with the same
   * id at `expectedRevision + 1` acknowledges the retry without writing (`duplicate`); anything
   * else fails `revision_conflict`. A claim on a key another Task holds fails `identity_conflict`;
   * a ref that names no stored object fails `object_missing`. On any failure nothing is written.
   * The promise resolves once the commit is durable.
   */
  async append(input: AppendInput): Promise<AppendResult> {
    this.writable();
    const prepared = (input.objects ?? []).map((o) => this.prepareObject(o));
    if (input.prepared) prepared.push(...input.prepared);
    const blobs = (input.blobs ?? []).map((b) => ({ digest: sha256(b), bytes: Buffer.from(b) }));
    const provided = new Set([...prepared.map((p) => p.digest), ...blobs.map((b) => b.digest)]);
    const { taskId, expectedRevision } = input;
    const revision = expectedRevision + 1;

    const result = await this.durable(
      this.env.childTransaction((): AppendResult => {
        const head = this.head(taskId);
        const current = head?.revision ?? 0;
        if (current !== expectedRevision) {
          const stored = current > expectedRevision ? this.event(taskId, revision) : undefined;
          if (stored && stored.id === input.event.id) return { revision, digest: digestOf(stored), duplicate: true };
          throw new StoreError(
            'revision_conflict',
            `task ${taskId}: expected revision ${expectedRevision}, head is ${current}`,
            { taskId, expectedRevision, revision: current },
            true,
          );
        }
        for (const ref of input.event.refs) {
          if (!provided.has(ref) && !this.hasObject(ref)) {
            throw new StoreError('object_missing', `task ${taskId} revision ${revision} references missing ${ref}`, {
              taskId,
              revision,
              object: ref,
            });
          }
        }
        for (const claim of input.claims ?? []) {
          if (!EXCLUSIVE_CLAIMS.has(claim.kind)) continue;
          const other = this.owners(claim.kind, claim.key).find((owner) => owner !== taskId);
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
          if (!this.objects.doesExist(digest)) void this.objects.put(digest, Buffer.from(text));
        for (const { digest, bytes } of blobs) if (!this.blobs.doesExist(digest)) void this.blobs.put(digest, bytes);
        const record: EventRecord = { ...input.event, prev: head?.digest ?? null };
        const digest = digestOf(record);
        void this.events.put([taskId, revision], record);
        void this.heads.put(taskId, { revision, digest } satisfies Head);
        for (const claim of input.claims ?? []) {
          void this.indexes.put(
            [claim.kind, claim.key, taskId],
            claim.digest === undefined ? { revision } : { revision, digest: claim.digest },
          );
        }
        void this.projections.put(taskId, input.projection);
        if (revision === this.streamWarnAt) {
          const warning: StreamWarning = { taskId, revision, threshold: this.streamWarnAt, at: input.event.at };
          void this.meta.put(['warning', taskId], warning);
        }
        return { revision, digest, duplicate: false };
      }),
      { taskId, revision },
    );
    return result;
  }

  // ---- low-level access for verification, doctor and tests ------------------------------------

  /** The raw LMDB databases, for the verifier, backups and tamper tests. Not for ordinary writes. */
  get databases() {
    return {
      env: this.env,
      objects: this.objects,
      blobs: this.blobs,
      events: this.events,
      heads: this.heads,
      projections: this.projections,
      indexes: this.indexes,
      meta: this.meta,
    };
  }

  /** Awaits a commit until durable; a failed commit (disk full, I/O error) becomes `storage_failed`, retryable. */
  private async durable<T>(commit: Promise<T>, details: Record<string, unknown>): Promise<T> {
    try {
      const value = await commit;
      await this.env.flushed;
      return value;
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const cause = await ((error as { commitError?: Promise<unknown> }).commitError ?? Promise.reject(error)).catch(
        (e: Error) => e.message,
      );
      throw new StoreError('storage_failed', `commit failed, nothing was written: ${cause}`, details, true);
    }
  }

  private writable(): void {
    if (this.readOnly)
      throw new StoreError('read_only', `the store at ${this.root} is open read-only`, { root: this.root });
  }

  private read<T>(fn: () => T, code: 'object_corrupt' | 'record_corrupt', details: Record<string, unknown>): T {
    try {
      return fn();
    } catch (error) {
      throw new StoreError(code, `cannot decode ${JSON.stringify(details)}: ${(error as Error).message}`, details);
    }
  }

  private parse<T>(schema: ZodType<T>, raw: unknown, details: Record<string, unknown>): T {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new StoreError(
        'record_corrupt',
        `stored record ${JSON.stringify(details)} is malformed at ${issue?.path.join('.')}: ${issue?.message}`,
        details,
      );
    }
    return parsed.data;
  }
}

/**
 * A stored value's bytes on lmdb's reusable read buffer (`getBinaryFast`), valid only until the
 * next read on this thread: use them at once, never keep them. That buffer is larger than the
 * value; lmdb sets its `length` property (not its byte length) to the value's size, so the view
 * is cut to `length` — hashing the buffer itself would hash the whole buffer.
 */
function borrowBytes(db: Database<Buffer, string>, key: string): Uint8Array | undefined {
  const bytes = db.getBinaryFast(key);
  return bytes === undefined ? undefined : bytes.subarray(0, bytes.length);
}
