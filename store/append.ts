import type { StoreAuthority } from './authority.js';
import { digestOf, sha256 } from './canonical.js';
import type { StoreDatabases } from './databases.js';
import { StoreError } from './errors.js';
import type { NewObject, PreparedObject } from './prepare-object.js';
import { durable } from './record-read.js';
import { JournalFirstCommit, writeEntry, type Journal, type JournalEntry } from './journal/index.js';
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

/** An append that passed its checks: the record to write and everything written with it. */
interface CheckedAppend {
  input: AppendInput;
  revision: number;
  record: EventRecord;
  digest: string;
  objects: PreparedObject[];
  blobs: Array<{ digest: string; bytes: Buffer }>;
  /** The claims whose key no other Task may hold. */
  exclusive: IndexClaim[];
}

/** What a commit mode did: `written` false when the event's key was taken meanwhile. */
interface CommitOutcome {
  written: boolean;
  duplicate: boolean;
}

/**
 * `EventStore.append` (see there) on the store's databases, built once per store; the caller
 * checked the store is writable. Each append is checked here, then committed in the store's one
 * mode: `commitLocal` (LMDB alone), `JournalFirstCommit` (store/journal/journal-first.ts: the
 * journal, LMDB applied beside it) or `commitMirrored` (the authority decides, LMDB mirrors it). It
 * keeps the store's appends not yet durable: the last one of each stream (an append is checked
 * only once the one before it on its stream has settled, so it reads that one's commit) and the
 * exclusive claims they make (no other Task's append may claim the same key meanwhile).
 */
export class Appender {
  private readonly streams = new Map<string, Promise<unknown>>();
  private readonly claims = new Map<string, string>();
  private readonly reads: AppendReads;
  private readonly dbs: StoreDatabases;
  private readonly streamWarnAt: number;
  private readonly authority: StoreAuthority | undefined;
  private readonly journalFirst: JournalFirstCommit | undefined;

  constructor(options: AppenderOptions) {
    this.reads = options.reads;
    this.dbs = options.dbs;
    this.streamWarnAt = options.streamWarnAt;
    this.authority = options.authority;
    this.journalFirst = options.journal && new JournalFirstCommit(options.journal, options.dbs);
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
    this.journalFirst?.assertRunning();
    const { taskId, expectedRevision } = input;
    const revision = expectedRevision + 1;
    const objects = (input.objects ?? []).map((o) => this.reads.prepareObject(o));
    if (input.prepared) objects.push(...input.prepared);
    const blobs = (input.blobs ?? []).map((b) => ({ digest: sha256(b), bytes: Buffer.from(b) }));
    const head = this.reads.head(taskId);
    const current = head?.revision ?? 0;
    if (current !== expectedRevision) return this.stored(input, current);
    this.checkReferences(input, revision, new Set([...objects, ...blobs].map((o) => o.digest)));
    const exclusive = this.checkClaims(input, revision);
    // Checks done; from here on only writes, all inside one condition, so a refused append leaves
    // nothing behind. Each put's own promise is the commit's, awaited by `durable`.
    const record: EventRecord = { ...input.event, prev: head?.digest ?? null };
    const append: CheckedAppend = { input, revision, record, digest: digestOf(record), objects, blobs, exclusive };
    const held = this.holdClaims(taskId, exclusive);
    try {
      const { written, duplicate } = await this.commit(append);
      // The event's key was taken after the checks: by a writer this store did not see (none
      // should exist behind the state-root lock); answered from what is stored, as a moved head.
      if (!written) return this.stored(input, revision);
      return { revision, digest: append.digest, duplicate };
    } finally {
      for (const key of held) this.claims.delete(key);
    }
  }

  /** Every object the event references is provided with it or already stored, else `object_missing`. */
  private checkReferences(input: AppendInput, revision: number, provided: ReadonlySet<string>): void {
    const { taskId } = input;
    for (const ref of input.event.refs) {
      if (!provided.has(ref) && !this.reads.hasObject(ref)) {
        throw new StoreError('object_missing', `task ${taskId} revision ${revision} references missing ${ref}`, {
          taskId,
          revision,
          object: ref,
        });
      }
    }
  }

  /** The append's exclusive claims, each held by no other Task (stored or in flight), else `identity_conflict`. */
  private checkClaims(input: AppendInput, revision: number): IndexClaim[] {
    const { taskId } = input;
    const exclusive = (input.claims ?? []).filter((claim) => EXCLUSIVE_CLAIMS.has(claim.kind));
    for (const claim of exclusive) {
      const other =
        this.reads.owners(claim.kind, claim.key).find((owner) => owner !== taskId) ??
        [this.claims.get(claimKey(claim))].find((owner) => owner !== undefined && owner !== taskId);
      if (other !== undefined) {
        throw new StoreError('identity_conflict', `${claim.kind} ${claim.key} already belongs to task ${other}`, {
          taskId,
          revision,
          object: claim.key,
          owner: other,
        });
      }
    }
    return exclusive;
  }

  /** Marks the exclusive claims not yet in flight as `taskId`'s until its commit settles; returns their keys. */
  private holdClaims(taskId: string, exclusive: IndexClaim[]): string[] {
    const held = exclusive.map(claimKey).filter((key) => !this.claims.has(key));
    for (const key of held) this.claims.set(key, taskId);
    return held;
  }

  /** Commits in the store's mode: mirrored behind an authority, journal-first with a journal, else LMDB alone. */
  private async commit(append: CheckedAppend): Promise<CommitOutcome> {
    if (this.authority) return this.commitMirrored(this.authority, append);
    const entry = this.entryOf(append, append.input.projection);
    const written = this.journalFirst ? await this.journalFirst.commit(entry) : await this.commitLocal(entry);
    return { written, duplicate: false };
  }

  /** LMDB alone: one conditional batch (the event's key still free), durable at its own flush. */
  private commitLocal(entry: JournalEntry): Promise<boolean> {
    const { dbs } = this;
    const { taskId, revision } = entry;
    return durable(
      dbs.env,
      dbs.events.ifNoExists([taskId, revision], () => writeEntry(dbs, entry, undefined)),
      { taskId, revision },
    );
  }

  /**
   * The authority decides (fenced by the Host's lease there); this store then mirrors what it took
   * with a local commit.
   */
  private async commitMirrored(authority: StoreAuthority, append: CheckedAppend): Promise<CommitOutcome> {
    const { input, revision, record, digest } = append;
    const { taskId, expectedRevision } = input;
    // The authority keeps the projection as JSON, which has no undefined (XState's persisted
    // snapshot carries `output: undefined`); the mirror stores the same value, so a Task copied in
    // from the authority later is byte for byte the one written here (a checkpoint's hash holds).
    const projection = JSON.parse(JSON.stringify(input.projection)) as Projection;
    const decided = await authority.commit({
      taskId,
      expectedRevision,
      revision,
      record,
      digest,
      objects: append.objects,
      blobs: append.blobs,
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
    const written = await this.commitLocal(this.entryOf(append, projection));
    return { written, duplicate: decided.duplicate };
  }

  /** What every commit mode writes to LMDB (and the journal-first one to the journal): the checked append with its projection. */
  private entryOf(append: CheckedAppend, projection: Projection): JournalEntry {
    const { input, revision, record, digest } = append;
    const { taskId, event } = input;
    const warning: StreamWarning | undefined =
      revision === this.streamWarnAt ? { taskId, revision, threshold: this.streamWarnAt, at: event.at } : undefined;
    return {
      taskId,
      revision,
      record,
      digest,
      objects: append.objects.map(({ digest: id, text }) => [id, text]),
      blobs: append.blobs.map(({ digest: id, bytes }) => [id, bytes]),
      claims: (input.claims ?? []).map((claim) => [
        claim.kind,
        claim.key,
        claim.digest === undefined ? { revision } : { revision, digest: claim.digest },
      ]),
      projection,
      ...(warning ? { warning } : {}),
    };
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
