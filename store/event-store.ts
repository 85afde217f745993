import type { Database, RootDatabase } from 'lmdb';
import { Appender, type AppendInput, type AppendResult } from './append.js';
import type { StoreAuthority } from './authority.js';
import { sha256, sha256Bytes } from './canonical.js';
import { EVENT_STRUCTURES, borrowBytes, type StoreDatabases } from './databases.js';
import { StoreError } from './errors.js';
import { MAX_REVISION, copyIntoMirror, forgetInMirror, type TaskCopyIn } from './mirror-copy.js';
import { isCanonicalObjectBytes, objectMatches, objectValue, type RawObject } from './object-bytes.js';
import { prepareObject, type NewObject, type ObjectKinds, type PreparedObject } from './prepare-object.js';
import { decodeOrFail, parseOrFail } from './record-read.js';
import { EventRecord, Head, IndexEntry, Projection, StreamWarning, safeParseHead, type IndexKind } from './records.js';
import { closeStore, openStore, type OpenedStore, type OpenOptions } from './store-open.js';

export type { OpenOptions } from './store-open.js';
export type { TaskCopyIn } from './mirror-copy.js';

/**
 * The Host's durable store on LMDB: immutable content-addressed objects, per-Task event streams
 * keyed `[taskId, revision]` and chained by digest, heads, projections and identity indexes.
 *
 * Reads are synchronous. `append` resolves only once its own commit is on disk (that write's `flushed`);
 * appends made concurrently share one commit and one sync (lmdb-js batches them), each checked
 * before it is written and written as one conditional batch, so one refused append never takes
 * another with it; appends to one stream are checked one after another.
 */
export class EventStore {
  private readonly env: RootDatabase;
  private readonly objects: Database<Buffer, string>;
  /** The objects database read as msgpack: objects of roots written before the canonical-bytes layout. */
  private readonly legacyObjects: Database<unknown, string>;
  private readonly blobs: Database<Buffer, string>;
  private readonly events: Database<unknown, [string, number]>;
  private readonly heads: Database<unknown, string>;
  private readonly projections: Database<unknown, string>;
  private readonly indexes: Database<unknown, [string, string, string]>;
  private readonly meta: Database<unknown, [string, string]>;
  readonly root: string;
  readonly readOnly: boolean;
  private readonly dbs: StoreDatabases;
  private readonly kinds: ObjectKinds;
  private readonly opened: OpenedStore;
  private readonly authority: StoreAuthority | undefined;
  private readonly appender: Appender;

  private constructor(opened: OpenedStore) {
    const { dbs } = opened;
    this.root = opened.root;
    this.readOnly = opened.readOnly;
    this.dbs = dbs;
    this.kinds = opened.kinds;
    this.opened = opened;
    this.authority = opened.authority;
    this.env = dbs.env;
    this.objects = dbs.objects;
    this.legacyObjects = dbs.legacyObjects;
    this.blobs = dbs.blobs;
    this.events = dbs.events;
    this.heads = dbs.heads;
    this.projections = dbs.projections;
    this.indexes = dbs.indexes;
    this.meta = dbs.meta;
    this.appender = new Appender({
      reads: this,
      dbs,
      streamWarnAt: opened.streamWarnAt,
      ...(opened.authority ? { authority: opened.authority } : {}),
      ...(opened.journal ? { journal: opened.journal } : {}),
    });
  }

  /** Opens (creating when writable) the store under `root`. Fails `format_unknown`, `state_locked`, `state_missing`. */
  static open(options: OpenOptions): EventStore {
    return new EventStore(openStore(options));
  }

  /** Waits for pending commits, closes LMDB and releases the state-root lock. */
  async close(): Promise<void> {
    await closeStore(this.opened);
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
    const raw = decodeOrFail(() => this.rawObject(digest), 'object_corrupt', { object: digest });
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

  /**
   * Writes objects ahead of the event that will reference them (idempotent; content-addressed).
   * With an authority they are stored there first: an append sends only the objects it carries,
   * and a Host taking the Task over copies the rest from the authority.
   */
  async putObjects(objects: NewObject[], blobs: Uint8Array[] = []): Promise<string[]> {
    this.writable();
    const prepared = objects.map((o) => this.prepareObject(o));
    const named = blobs.map((bytes) => ({ digest: sha256(bytes), bytes }));
    await this.authority?.putObjects(prepared, named);
    // A put inside a transaction callback joins that transaction; its promise is the
    // transaction's commit, awaited here, so each put's own promise is deliberately dropped.
    await this.env.childTransaction(() => {
      for (const { digest, text } of prepared)
        if (!this.objects.doesExist(digest)) void this.objects.put(digest, Buffer.from(text));
      for (const { digest, bytes } of named)
        if (!this.blobs.doesExist(digest)) void this.blobs.put(digest, Buffer.from(bytes));
    });
    await this.env.flushed;
    return [...prepared.map((p) => p.digest), ...named.map((b) => b.digest)];
  }

  // ---- streams -------------------------------------------------------------------------------

  head(taskId: string): Head | undefined {
    const raw = this.heads.get(taskId);
    if (raw === undefined) return undefined;
    const fast = safeParseHead(raw);
    return fast.success ? fast.data : parseOrFail(Head, raw, { taskId, object: 'head' });
  }

  projection(taskId: string): Projection | undefined {
    const raw = this.projections.get(taskId);
    if (raw === undefined) return undefined;
    return parseOrFail(Projection, raw, { taskId, object: 'projection' });
  }

  event(taskId: string, revision: number): EventRecord | undefined {
    const raw = decodeOrFail(() => this.events.get([taskId, revision]), 'record_corrupt', { taskId, revision });
    return raw === undefined ? undefined : parseOrFail(EventRecord, raw, { taskId, revision });
  }

  /** Events of one stream in revision order, as stored (unparsed values are parsed by the caller). */
  *rawStream(taskId: string, from = 1): Generator<{ revision: number; value: unknown }> {
    for (const { key, value } of this.events.getRange({ start: [taskId, from], end: [taskId, MAX_REVISION] })) {
      yield { revision: key[1], value };
    }
  }

  *stream(taskId: string, from = 1): Generator<{ revision: number; event: EventRecord }> {
    for (const { revision, value } of this.rawStream(taskId, from)) {
      yield { revision, event: parseOrFail(EventRecord, value, { taskId, revision }) };
    }
  }

  /**
   * How many events the store holds (every Task's history), in O(1): LMDB's own entry count for
   * the events database, less the shared-structures record lmdb-js keeps beside the events
   * (skipped by cursors, counted by LMDB). Anything else stored there that is not an event counts
   * too.
   */
  eventCount(): number {
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
   * one transaction, on the condition that the event's key is still free. The checks see what
   * is committed once this stream's previous append has settled: if the head is not
   * `expectedRevision`, an already stored event with the same id at `expectedRevision + 1`
   * acknowledges the retry without writing (`duplicate`); anything else fails
   * `revision_conflict`. A claim on a key another Task holds, or claims in an append not yet
   * durable, fails `identity_conflict`; a ref that names no stored object fails `object_missing`.
   * On any failure nothing is written. The promise resolves once the commit is durable.
   */
  async append(input: AppendInput): Promise<AppendResult> {
    this.writable();
    return this.appender.append(input);
  }

  /** Whether appends are decided by an authority (several Hosts on one history) rather than here. */
  get mirrored(): boolean {
    return this.authority !== undefined;
  }

  /**
   * Copies a Task from the authority into this mirror, after its head: the events must continue
   * the stream stored here (each `prev` the digest before it, each digest its record's), or
   * nothing is written and it fails `record_corrupt`. Durable when it resolves.
   */
  async copyIn(copy: TaskCopyIn): Promise<void> {
    this.writable();
    await copyIntoMirror(this.dbs, this.head(copy.taskId), copy);
  }

  /** Removes a Task's stream, head, projection and claims from this mirror (its objects stay: they are content-addressed). */
  async forget(taskId: string): Promise<void> {
    this.writable();
    await forgetInMirror(this.dbs, taskId);
  }

  // ---- values as stored, for verification (recovery/, doctor) ----------------------------------

  /** A head record as stored (not parsed), undefined when absent. Throws when it cannot be decoded. */
  rawHead(taskId: string): unknown {
    return this.heads.get(taskId);
  }

  /** A projection record as stored (not parsed), undefined when absent. Throws when it cannot be decoded. */
  rawProjection(taskId: string): unknown {
    return this.projections.get(taskId);
  }

  /**
   * sha256 of a projection's stored bytes, hashed where lmdb-js reads them (no copy), undefined
   * when absent: a checkpointed start checks one per Task, and copying each projection cost
   * about as much as hashing it.
   */
  projectionSha256(taskId: string): string | undefined {
    const bytes = borrowBytes(this.projections as Database<Buffer, string>, taskId);
    return bytes === undefined ? undefined : sha256Bytes(bytes);
  }

  /** A projection's stored bytes (a copy), undefined when absent. */
  projectionBytes(taskId: string): Uint8Array | undefined {
    return this.projections.getBinary(taskId);
  }

  /** An event record as stored (not parsed), undefined when absent. Throws when it cannot be decoded. */
  rawEvent(taskId: string, revision: number): unknown {
    return this.events.get([taskId, revision]);
  }

  /** Artifact bytes as stored (a copy, not checked against their digest), undefined when absent. */
  rawBlob(digest: string): Uint8Array | undefined {
    return this.blobs.getBinary(digest);
  }

  // ---- low-level access for store/'s scans, backups and tests ---------------------------------

  /**
   * The raw LMDB databases: for store/'s own cursor walks (scan.ts, meta.ts), backups, the bench
   * and tamper tests. Not for ordinary writes, nor for code outside store/ (recovery/ reads
   * through the scans and the raw reads above).
   */
  get databases(): StoreDatabases {
    return this.dbs;
  }

  private writable(): void {
    if (this.readOnly)
      throw new StoreError('read_only', `the store at ${this.root} is open read-only`, { root: this.root });
  }
}
