import Database from 'better-sqlite3';
import type { ObjectKinds } from '../../store/index.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import {
  EventRecord,
  StoreError,
  digestOf,
  prepareObject,
  sha256,
  type AppendInput,
  type AppendResult,
  type EventStore,
  type NewObject,
  type PreparedObject,
} from '../../store/index.js';

/**
 * The SQLite peer: the Host's store schema (objects, blobs, per-Task event streams chained by
 * digest, heads, projections, identity indexes) and its append contract (objects first, one
 * transaction with revision compare-and-set, idempotent retry, exclusive claims) on
 * better-sqlite3 with WAL and `synchronous = FULL`.
 *
 * Events are a clustered table keyed `(task_id, revision)` (WITHOUT ROWID), the same key layout
 * as the LMDB `events` database, with the record as JSON text. Appends made in the same tick are
 * grouped into one transaction and one sync, each in its own savepoint, like lmdb-js's batched
 * child transactions; a caller's promise resolves after the commit.
 */
export class SqlitePeerStore {
  private queue: Array<{ input: AppendInput; resolve: (r: AppendResult) => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;
  private readonly statements;
  private readonly appendOne: (input: AppendInput) => AppendResult;
  private readonly appendBatch: (inputs: AppendInput[]) => Array<{ ok: AppendResult } | { error: unknown }>;

  private constructor(
    readonly db: Database.Database,
    private readonly kinds: ObjectKinds,
    private readonly streamWarnAt: number,
  ) {
    const s = {
      head: db.prepare('SELECT revision, digest FROM heads WHERE task_id = ?'),
      event: db.prepare('SELECT body FROM events WHERE task_id = ? AND revision = ?').pluck(),
      object: db.prepare('SELECT body FROM objects WHERE digest = ?').pluck(),
      hasObject: db
        .prepare('SELECT 1 FROM objects WHERE digest = ? UNION ALL SELECT 1 FROM blobs WHERE digest = ? LIMIT 1')
        .pluck(),
      otherOwner: db.prepare('SELECT task_id FROM indexes WHERE kind = ? AND key = ? AND task_id != ? LIMIT 1').pluck(),
      claimedAt: db.prepare('SELECT revision FROM indexes WHERE kind = ? AND key = ? AND task_id = ?').pluck(),
      putObject: db.prepare('INSERT OR IGNORE INTO objects (digest, body) VALUES (?, ?)'),
      putBlob: db.prepare('INSERT OR IGNORE INTO blobs (digest, bytes) VALUES (?, ?)'),
      putEvent: db.prepare('INSERT INTO events (task_id, revision, body) VALUES (?, ?, ?)'),
      putHead: db.prepare('INSERT OR REPLACE INTO heads (task_id, revision, digest) VALUES (?, ?, ?)'),
      putClaim: db.prepare('INSERT OR REPLACE INTO indexes (kind, key, task_id, revision) VALUES (?, ?, ?, ?)'),
      putProjection: db.prepare('INSERT OR REPLACE INTO projections (task_id, body) VALUES (?, ?)'),
      putWarning: db.prepare('INSERT OR REPLACE INTO warnings (task_id, body) VALUES (?, ?)'),
    };
    this.statements = s;
    this.appendOne = db.transaction((input: AppendInput) => this.write(input));
    this.appendBatch = db.transaction((inputs: AppendInput[]) =>
      inputs.map((input) => {
        try {
          return { ok: this.appendOne(input) }; // nested: a savepoint, rolled back alone on failure
        } catch (error) {
          return { error };
        }
      }),
    );
  }

  /** Opens (creating) the peer database at `path` with WAL and synchronous FULL. */
  static open(
    path: string,
    options: { readOnly?: boolean; kinds?: ObjectKinds; streamWarnAt?: number } = {},
  ): SqlitePeerStore {
    const db = new Database(path, { readonly: options.readOnly ?? false });
    if (!options.readOnly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec(`
        CREATE TABLE IF NOT EXISTS objects (digest TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID; -- canonical JSON text: the digest is its sha256
        CREATE TABLE IF NOT EXISTS blobs (digest TEXT PRIMARY KEY, bytes BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS events (task_id TEXT NOT NULL, revision INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (task_id, revision)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS heads (task_id TEXT PRIMARY KEY, revision INTEGER NOT NULL, digest TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS projections (task_id TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS indexes (kind TEXT NOT NULL, key TEXT NOT NULL, task_id TEXT NOT NULL, revision INTEGER NOT NULL, PRIMARY KEY (kind, key, task_id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS warnings (task_id TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
      `);
    }
    return new SqlitePeerStore(db, options.kinds ?? OBJECT_KINDS, options.streamWarnAt ?? 10_000);
  }

  close(): void {
    this.db.close();
  }

  /** Validates an object against its kind and returns its id, exactly as EventStore does. */
  prepareObject(object: NewObject): PreparedObject {
    return prepareObject(this.kinds, object);
  }

  hasObject(digest: string): boolean {
    return this.statements.hasObject.get(digest, digest) !== undefined;
  }

  /** Reads an object, re-checking its digest and kind schema, as EventStore does (admission reads Contexts). */
  getObject<T = unknown>(digest: string, kind?: string): { kind: string; body: T } {
    const text = this.statements.object.get(digest) as string | undefined;
    if (text === undefined) throw new StoreError('object_missing', `object ${digest} is missing`, { object: digest });
    const value = JSON.parse(text) as { kind: string; body: T };
    const schema = this.kinds[value.kind];
    if (sha256(text) !== digest || !schema?.safeParse(value.body).success || (kind && value.kind !== kind))
      throw new StoreError('object_corrupt', `object ${digest} is not a valid ${kind ?? value.kind}`, {
        object: digest,
      });
    return value;
  }

  event(taskId: string, revision: number): EventRecord | undefined {
    const body = this.statements.event.get(taskId, revision) as string | undefined;
    return body === undefined ? undefined : EventRecord.parse(JSON.parse(body));
  }

  claimedAt(kind: string, key: string, taskId: string): { revision: number } | undefined {
    const revision = this.statements.claimedAt.get(kind, key, taskId) as number | undefined;
    return revision === undefined ? undefined : { revision };
  }

  /** Appends with revision CAS; resolves after the grouped commit (durable with synchronous FULL). */
  append(input: AppendInput): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    let results: Array<{ ok: AppendResult } | { error: unknown }>;
    try {
      results = this.appendBatch(batch.map((b) => b.input));
    } catch (error) {
      for (const b of batch) b.reject(new StoreError('storage_failed', (error as Error).message));
      return;
    }
    results.forEach((result, i) => ('ok' in result ? batch[i]!.resolve(result.ok) : batch[i]!.reject(result.error)));
  }

  private write(input: AppendInput): AppendResult {
    const s = this.statements;
    const prepared = (input.objects ?? []).map((o) => this.prepareObject(o));
    if (input.prepared) prepared.push(...input.prepared);
    const blobs = (input.blobs ?? []).map((b) => ({ digest: sha256(b), bytes: Buffer.from(b) }));
    const provided = new Set([...prepared.map((p) => p.digest), ...blobs.map((b) => b.digest)]);
    const { taskId, expectedRevision } = input;
    const revision = expectedRevision + 1;
    const head = s.head.get(taskId) as { revision: number; digest: string } | undefined;
    const current = head?.revision ?? 0;
    if (current !== expectedRevision) {
      const stored = current > expectedRevision ? this.event(taskId, revision) : undefined;
      if (stored && stored.id === input.event.id) return { revision, digest: digestOf(stored), duplicate: true };
      throw new StoreError(
        'revision_conflict',
        `task ${taskId}: expected revision ${expectedRevision}, head is ${current}`,
        { taskId, expectedRevision, revision: current },
        { retryable: true },
      );
    }
    for (const ref of input.event.refs) {
      if (!provided.has(ref) && s.hasObject.get(ref, ref) === undefined) {
        throw new StoreError('object_missing', `task ${taskId} revision ${revision} references missing ${ref}`, {
          taskId,
          revision,
          object: ref,
        });
      }
    }
    for (const claim of input.claims ?? []) {
      if (claim.kind === 'artifact') continue;
      const other = s.otherOwner.get(claim.kind, claim.key, taskId) as string | undefined;
      if (other !== undefined)
        throw new StoreError('identity_conflict', `${claim.kind} ${claim.key} already belongs to task ${other}`, {
          taskId,
          revision,
          object: claim.key,
          owner: other,
        });
    }
    for (const { digest, text } of prepared) s.putObject.run(digest, text);
    for (const { digest, bytes } of blobs) s.putBlob.run(digest, bytes);
    const record: EventRecord = { ...input.event, prev: head?.digest ?? null };
    const digest = digestOf(record);
    s.putEvent.run(taskId, revision, JSON.stringify(record));
    s.putHead.run(taskId, revision, digest);
    for (const claim of input.claims ?? []) s.putClaim.run(claim.kind, claim.key, taskId, revision);
    s.putProjection.run(taskId, JSON.stringify(input.projection));
    if (revision === this.streamWarnAt)
      s.putWarning.run(taskId, JSON.stringify({ taskId, revision, threshold: this.streamWarnAt, at: input.event.at }));
    return { revision, digest, duplicate: false };
  }
}

/** The part of EventStore the kernel (TaskActor) uses; the peer implements exactly this. */
export type KernelStore = Pick<EventStore, 'append' | 'event' | 'claimedAt' | 'prepareObject'>;

/**
 * Lets the real kernel (TaskActor) drive the peer. TaskActor is typed against EventStore (a class
 * with private members, so no structural type can satisfy it) but only calls the four methods of
 * KernelStore; the check below keeps the peer honest about them.
 */
export function asKernelStore(peer: SqlitePeerStore): EventStore {
  const kernel: KernelStore = peer;
  return kernel as unknown as EventStore;
}
