import type { StoreAuthority } from './authority.js';
import { digestOf, sha256 } from './canonical.js';
import type { StoreDatabases } from './databases.js';
import { StoreError } from './errors.js';
import type { NewObject, PreparedObject } from './prepare-object.js';
import { durable } from './record-read.js';
import { digestBytes, encodeEntry, writeEntry, type Journal, type JournalEntry } from './journal/index.js';
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

/** The committed state an append is checked against: what `EventStore` reads synchronously. */
export interface AppendReads {
  prepareObject(object: NewObject): PreparedObject;
  head(taskId: string): Head | undefined;
  hasObject(digest: string): boolean;
  owners(kind: IndexKind, key: string): string[];
  event(taskId: string, revision: number): EventRecord | undefined;
}

export interface AppenderOptions {
  /** The store's reads; the Appender writes through `dbs` only. */
  reads: AppendReads;
  dbs: StoreDatabases;
  /** The revision at which a stream's warning is recorded. */
  streamWarnAt: number;
  /** Where appends are decided when several Hosts share one history; this store then mirrors them. */
  authority?: StoreAuthority;
  /** The journal-first commit (store/journal/): each append is durable at its journal group's sync, LMDB applied after it. */
  journal?: Journal;
}

const claimKey = (claim: IndexClaim) => `${claim.kind}\u0000${claim.key}`;

/**
 * `EventStore.append` (see there) on the store's databases, built once per store; the caller
 * checked the store is writable. It keeps the store's appends not yet durable: the last one of
 * each stream (an append is checked only once the one before it on its stream has settled, so it
 * reads that one's commit) and the exclusive claims they make (no other Task's append may claim
 * the same key meanwhile).
 */
export class Appender {
  private readonly streams = new Map<string, Promise<unknown>>();
  private readonly claims = new Map<string, string>();
  private readonly reads: AppendReads;
  private readonly dbs: StoreDatabases;
  private readonly streamWarnAt: number;
  private readonly authority: StoreAuthority | undefined;
  private readonly journal: Journal | undefined;
  /** Set when LMDB could not apply a journaled transition: LMDB is then behind the journal, and only a reopen (which replays it) may take appends again. */
  private stopped: StoreError | undefined;
  private releasing = false;

  constructor(options: AppenderOptions) {
    this.reads = options.reads;
    this.dbs = options.dbs;
    this.streamWarnAt = options.streamWarnAt;
    this.authority = options.authority;
    this.journal = options.journal;
  }

  async append(input: AppendInput): Promise<AppendResult> {
    const { taskId } = input;
    const before = this.streams.get(taskId);
    const settled = () => undefined;
    const run = before
      ? before.then(settled, settled).then(() => this.appendChecked(input))
      : this.appendChecked(input);
    this.streams.set(taskId, run);
    try {
      return await run;
    } finally {
      if (this.streams.get(taskId) === run) this.streams.delete(taskId);
    }
  }

  /**
   * The checks run here, on the calling thread, against what is committed (the stream's previous
   * append has settled) and the exclusive claims in flight; the writes then go to lmdb-js as one
   * conditional batch (`ifNoExists` on the event's key, checked again by the write thread inside
   * the commit), so no JavaScript runs inside the write transaction: a transaction callback costs
   * a round trip between the write thread and this one per commit (about a tenth of a one-Task
   * admission on the bench machine).
   */
  private async appendChecked(input: AppendInput): Promise<AppendResult> {
    if (this.stopped) throw this.stopped;
    const { reads, dbs, streamWarnAt, authority, claims: inFlightClaims } = this;
    const prepared = (input.objects ?? []).map((o) => reads.prepareObject(o));
    if (input.prepared) prepared.push(...input.prepared);
    const blobs = (input.blobs ?? []).map((b) => ({ digest: sha256(b), bytes: Buffer.from(b) }));
    const provided = new Set([...prepared.map((p) => p.digest), ...blobs.map((b) => b.digest)]);
    const { taskId, expectedRevision } = input;
    const revision = expectedRevision + 1;

    const head = reads.head(taskId);
    const current = head?.revision ?? 0;
    if (current !== expectedRevision) return this.stored(input, current);
    for (const ref of input.event.refs) {
      if (!provided.has(ref) && !reads.hasObject(ref)) {
        throw new StoreError('object_missing', `task ${taskId} revision ${revision} references missing ${ref}`, {
          taskId,
          revision,
          object: ref,
        });
      }
    }
    const exclusive = (input.claims ?? []).filter((claim) => EXCLUSIVE_CLAIMS.has(claim.kind));
    for (const claim of exclusive) {
      const other =
        reads.owners(claim.kind, claim.key).find((owner) => owner !== taskId) ??
        [inFlightClaims.get(claimKey(claim))].find((owner) => owner !== undefined && owner !== taskId);
      if (other !== undefined) {
        throw new StoreError('identity_conflict', `${claim.kind} ${claim.key} already belongs to task ${other}`, {
          taskId,
          revision,
          object: claim.key,
          owner: other,
        });
      }
    }
    // Checks done; from here on only writes, all inside one condition, so a refused append leaves
    // nothing behind. Each put's own promise is the commit's, awaited by `durable`.
    const record: EventRecord = { ...input.event, prev: head?.digest ?? null };
    const digest = digestOf(record);
    // The authority keeps the projection as JSON, which has no undefined (XState's persisted
    // snapshot carries `output: undefined`); the mirror stores the same value, so a Task copied in
    // from the authority later is byte for byte the one written here (a checkpoint's hash holds).
    const projection = authority ? (JSON.parse(JSON.stringify(input.projection)) as Projection) : input.projection;
    const claimed = exclusive.map(claimKey).filter((key) => !inFlightClaims.has(key));
    for (const key of claimed) inFlightClaims.set(key, taskId);
    try {
      let duplicate = false;
      if (authority) {
        // The authority decides (fenced by the Host's lease there); this store only mirrors what it took.
        const decided = await authority.commit({
          taskId,
          expectedRevision,
          revision,
          record,
          digest,
          objects: prepared,
          blobs,
          claims: (input.claims ?? []).map((claim) => ({ ...claim, exclusive: EXCLUSIVE_CLAIMS.has(claim.kind) })),
          projection,
        });
        // An earlier attempt reached the authority but not this mirror (its answer was lost). When
        // the authority stored this very record, the mirror takes it now, so that the duplicate's
        // event can be read here as on a store without an authority. Another record under the same
        // id (another time, so another projection) is the authority's, not this call's, and is not
        // written from here: the Host copies the Task again on this code, and a retry after that is
        // a duplicate here too.
        if (decided.duplicate && decided.digest !== digest)
          throw new StoreError(
            'storage_failed',
            `task ${taskId} revision ${revision} is committed in the shared history but not in this Host's copy; retry once the Task is copied again`,
            { taskId, revision, digest: decided.digest },
            { retryable: true },
          );
        duplicate = decided.duplicate;
      }
      const warning: StreamWarning | undefined =
        revision === streamWarnAt ? { taskId, revision, threshold: streamWarnAt, at: input.event.at } : undefined;
      const entry: JournalEntry = {
        taskId,
        revision,
        record,
        digest,
        objects: prepared.map(({ digest: id, text }) => [id, text]),
        blobs: blobs.map(({ digest: id, bytes }) => [id, bytes]),
        claims: (input.claims ?? []).map((claim) => [
          claim.kind,
          claim.key,
          claim.digest === undefined ? { revision } : { revision, digest: claim.digest },
        ]),
        projection,
        ...(warning ? { warning } : {}),
      };
      const written =
        this.journal && !authority
          ? await this.journaled(this.journal, entry)
          : await durable(
              dbs.env,
              dbs.events.ifNoExists([taskId, revision], () => writeEntry(dbs, entry, undefined)),
              { taskId, revision },
            );
      // The event's key was taken after the checks: by a writer this store did not see (none
      // should exist behind the state-root lock); answered from what is stored, as a moved head.
      if (!written) return this.stored(input, revision);
      return { revision, digest, duplicate };
    } finally {
      for (const key of claimed) inFlightClaims.delete(key);
    }
  }

  /**
   * The journal-first commit: the entry is queued in the journal and, in the same turn, written to
   * LMDB as one conditional batch (the event's key still free, the applied position in the same
   * transaction), so LMDB's commit runs beside the journal's write and sync instead of after them.
   * The append is acknowledged once both hold: its group's fdatasync returned (durable) and its
   * LMDB commit is visible (not flushed: until LMDB's own flush the journal holds the transition,
   * and the next open re-applies it). What LMDB shows before the sync returned is acknowledged to
   * no one; should the sync fail, the journal and this store stop (`journal_failed`, fail-stop)
   * and such a transition counts as a commit whose answer was lost. A journaled transition LMDB
   * could not apply stops this store's appends too (`journal_failed`): the next open applies it.
   */
  private async journaled(journal: Journal, entry: JournalEntry): Promise<boolean> {
    const { dbs } = this;
    const { taskId, revision } = entry;
    const { seq, synced } = journal.append(encodeEntry(entry), digestBytes(entry.digest));
    const commit = dbs.events.ifNoExists([taskId, revision], () => writeEntry(dbs, entry, seq));
    const [sync, applied] = await Promise.allSettled([synced, commit]);
    if (sync.status === 'rejected') {
      this.stopped ??= sync.reason as StoreError;
      throw sync.reason;
    }
    if (applied.status === 'rejected') {
      this.stopped ??= new StoreError(
        'journal_failed',
        `task ${taskId} revision ${revision} is in the journal but LMDB could not apply it (${(applied.reason as Error).message}); no append is taken until the store is opened again, which applies it`,
        { taskId, revision },
        { cause: applied.reason },
      );
      throw this.stopped;
    }
    const sealed = journal.sealedThrough;
    if (sealed !== undefined && sealed <= seq && !this.releasing) {
      // Segments go only once LMDB's applied position past them is on disk.
      this.releasing = true;
      void dbs.env.flushed
        .then(() => journal.release(seq))
        .finally(() => {
          this.releasing = false;
        });
    }
    return applied.value;
  }

  /**
   * The answer to an append whose stream is not at `expectedRevision` (its head is `current`): the
   * same event id already stored at the revision it asked for acknowledges a retry; anything else
   * is `revision_conflict`.
   */
  private stored(input: AppendInput, current: number): AppendResult {
    const { taskId, expectedRevision } = input;
    const revision = expectedRevision + 1;
    const event = current > expectedRevision ? this.reads.event(taskId, revision) : undefined;
    if (event && event.id === input.event.id) return { revision, digest: digestOf(event), duplicate: true };
    throw new StoreError(
      'revision_conflict',
      `task ${taskId}: expected revision ${expectedRevision}, head is ${current}`,
      { taskId, expectedRevision, revision: current },
      { retryable: true },
    );
  }
}
