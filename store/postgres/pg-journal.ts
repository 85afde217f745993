import type pg from 'pg';
import { z } from 'zod';
import type { AuthorityCommit, StoreAuthority } from '../authority.js';
import { StoreError } from '../errors.js';
import type { TaskCopyIn } from '../event-store.js';
import { EventRecord, IndexKind, Projection } from '../records.js';
import { openPool, queryOrFail, redact, withClient, type PoolOptions } from './pg-pool.js';
import { PgJobs, type StoredJob } from './pg-jobs.js';
import { PgLeases, type HeldLease } from './pg-leases.js';
import { ensureSchema } from './pg-schema.js';
import { parseStored, storeErrorOf } from './stored.js';
import { COMMITS_CHANNEL, CommitNotifier } from './commit-notifier.js';
import { readEvents, readOwner, readTask, type SharedEvent, type SharedTask } from './task-reads.js';
import { TaskWatch, type TaskWatchOptions } from './task-watch.js';

/** The pool's options (pg-pool.ts) and this Host's part in the cluster. */
export interface PgJournalOptions extends PoolOptions {
  /** This Host's name in lease rows, job rows and the hosts table; unique among live Hosts. */
  hostId: string;
  /** How long a lease lasts without renewal (database clock). */
  leaseMs?: number;
  /** Where clients reach this Host's control API, published in `ordivon_hosts` for `task_elsewhere` answers. */
  advertisedUrl?: string | undefined;
  /**
   * NOTIFY `ordivon_commits` with the Task ids committed, once per `notifyWindowMs` (default 20),
   * from a statement of its own: a hint for other Hosts' watches (default true).
   */
  notify?: boolean;
  notifyWindowMs?: number;
}

export const DEFAULT_LEASE_MS = 10_000;

/** Everything of one Task a Host needs in its mirror, after a revision (what `EventStore.copyIn` takes). */
export type TaskCopy = TaskCopyIn;

const EventRow = z.object({
  revision: z.coerce.number().int().positive(),
  digest: z.string(),
  record: z.string(),
});
const BytesRow = z.object({ digest: z.string(), bytes: z.instanceof(Uint8Array) });
const ClaimRow = z.object({
  kind: IndexKind,
  key: z.string(),
  revision: z.coerce.number().int().positive(),
  digest: z.string().nullable(),
});
const ProjectionRow = z.object({ record: z.string() });
// Row schemas are built once, at load: zod compiles a schema on its first parse, and a schema built
// per append spent the Host's CPU on compiling it again each time (seen in a profile of the cluster
// benchmark).
const AppendedRow = z.object({ stored: z.string().nullable() });
const OwnerUrlRow = z.object({ owner: z.string().nullable(), url: z.string().nullable() });

/** Our own SQLSTATEs raised by `ordivon_append` (schema.ts). */
const RAISED: Record<string, 'lease_lost' | 'revision_conflict' | 'identity_conflict'> = {
  OR001: 'lease_lost',
  OR002: 'revision_conflict',
  OR003: 'identity_conflict',
};

/**
 * The shared history on PostgreSQL, with this Host's leases on it (pg-leases.ts) and the Runtime
 * jobs of every Host (pg-jobs.ts), all on one pool (pg-pool.ts). Every append is one call of
 * `ordivon_append` (one round trip, one transaction): the lease epoch this Host acquired the Task
 * with is compared there, beside the revision, so a Host that lost the Task — paused past its
 * lease, partitioned, or simply slower — writes nothing and hears `lease_lost`.
 */
export class PgJournal implements StoreAuthority {
  readonly hostId: string;
  readonly leaseMs: number;
  /** The epoch of each Task this Host holds, and its heartbeat. */
  private readonly lease: PgLeases;
  private readonly jobs: PgJobs;
  private readonly notifier: CommitNotifier | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: PgJournalOptions,
  ) {
    this.hostId = options.hostId;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.lease = new PgLeases({
      pool,
      hostId: this.hostId,
      leaseMs: this.leaseMs,
      advertisedUrl: options.advertisedUrl ?? null,
    });
    this.jobs = new PgJobs(pool, this.hostId);
    if (options.notify !== false)
      this.notifier = new CommitNotifier(
        (payloads) => pool.query(`SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, [COMMITS_CHANNEL, payloads]),
        options.notifyWindowMs,
      );
  }

  /** Connects, creates the tables when absent (`format_unknown` for another schema version) and registers this Host. */
  static async open(options: PgJournalOptions): Promise<PgJournal> {
    const pool = openPool(options);
    const journal = new PgJournal(pool, options);
    try {
      await ensureSchema(pool);
      await journal.heartbeat();
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw storeErrorOf(error, { url: redact(options.url) });
    }
    return journal;
  }

  async close(): Promise<void> {
    await this.notifier?.close();
    await this.pool.end();
  }

  // ---- leases (pg-leases.ts) -----------------------------------------------------------------

  /** Tasks this Host holds, with the epoch of each. */
  leases(): HeldLease[] {
    return this.lease.leases();
  }

  holds(taskId: string): boolean {
    return this.lease.holds(taskId);
  }

  /**
   * Takes up to `limit` Tasks (default 1000) nobody holds or whose lease expired (database clock),
   * each at a new epoch.
   */
  claim(limit?: number): Promise<HeldLease[]> {
    return this.lease.claim(limit);
  }

  /** Extends every lease still held at its epoch; returns the Tasks whose lease was lost (another Host took them). */
  renew(): Promise<string[]> {
    return this.lease.renew();
  }

  /** Gives Tasks up (drain), every Task this Host holds by default: another Host may claim them at once. */
  release(taskIds?: string[]): Promise<void> {
    return this.lease.release(taskIds);
  }

  /** Records that this Host is alive until now + the lease time (database clock). */
  heartbeat(): Promise<void> {
    return this.lease.heartbeat();
  }

  /** Publishes where clients reach this Host (null: nowhere), beside its heartbeat; later heartbeats keep it. */
  advertise(url: string | null): Promise<void> {
    return this.lease.advertise(url);
  }

  /** Whether a Host's heartbeat is current (database clock); false for a Host never seen or stopped. */
  hostAlive(hostId: string): Promise<boolean> {
    return this.lease.hostAlive(hostId);
  }

  /** Marks this Host stopped (after its leases were released). */
  leave(): Promise<void> {
    return this.lease.leave();
  }

  // ---- jobs (pg-jobs.ts) ----------------------------------------------------------------------

  /**
   * Records a Runtime job, stamped with this Host on first insert; a `final` record is never
   * replaced. Resolves with the row as stored after the call; `identity_conflict` when another job
   * holds `clientRequestId` (PgJobs.putJob).
   */
  putJob(jobId: string, clientRequestId: string, record: unknown, options?: { final?: boolean }): Promise<StoredJob> {
    return this.jobs.putJob(jobId, clientRequestId, record, options);
  }

  /** The jobs recorded under exactly `clientRequestId` (an equality lookup: never a prefix). */
  jobsByRequest(clientRequestId: string): Promise<StoredJob[]> {
    return this.jobs.jobsByRequest(clientRequestId);
  }

  /** One job's row; undefined when no Host recorded it. */
  job(jobId: string): Promise<StoredJob | undefined> {
    return this.jobs.job(jobId);
  }

  // ---- appends -----------------------------------------------------------------------------------

  async commit(append: AuthorityCommit): Promise<{ duplicate: false } | { duplicate: true; digest: string }> {
    const { taskId, expectedRevision, record, claims } = append;
    const epoch = this.lease.epochOf(taskId) ?? 0;
    if (expectedRevision > 0 && epoch === 0)
      throw new StoreError('lease_lost', `this Host (${this.hostId}) holds no lease on task ${taskId}`, {
        taskId,
        revision: append.revision,
      });
    let stored: string | null;
    try {
      const { rows } = await this.pool.query(
        `SELECT ordivon_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) AS stored`,
        [
          taskId,
          expectedRevision,
          this.hostId,
          epoch,
          this.leaseMs,
          record.id,
          append.digest,
          JSON.stringify(record),
          record.refs,
          append.objects.map((o) => o.digest),
          append.objects.map((o) => Buffer.from(o.text)),
          append.blobs.map((b) => b.digest),
          append.blobs.map((b) => Buffer.from(b.bytes)),
          claims.map((c) => c.kind),
          claims.map((c) => c.key),
          claims.map((c) => c.digest ?? null),
          claims.map((c) => c.exclusive),
          JSON.stringify(append.projection),
        ],
      );
      stored = AppendedRow.parse(rows[0]).stored;
    } catch (error) {
      const details = { taskId, revision: append.revision };
      const code = RAISED[(error as { code?: string }).code ?? ''];
      if (code === 'lease_lost') this.lease.drop(taskId);
      if (code) {
        const detail = (error as { detail?: string }).detail ?? '';
        throw new StoreError(
          code,
          (error as Error).message,
          code === 'identity_conflict'
            ? { ...details, owner: detail }
            : code === 'revision_conflict'
              ? { ...details, expectedRevision, revision: Number(detail) }
              : details,
          { retryable: code === 'revision_conflict' },
        );
      }
      // Two appends racing for one exclusive key: the loser meets the unique index.
      if ((error as { constraint?: string }).constraint === 'ordivon_claims_exclusive')
        throw new StoreError('identity_conflict', (error as Error).message, details);
      throw storeErrorOf(error, details);
    }
    if (expectedRevision === 0 && stored === null) this.lease.hold(taskId, 1);
    // A hint for other Hosts' watches, sent later from a statement of its own: this append neither waits for it nor fails with it.
    if (stored === null) this.notifier?.note(taskId);
    return stored === null ? { duplicate: false } : { duplicate: true, digest: stored };
  }

  async putObjects(
    objects: ReadonlyArray<{ digest: string; text: string }>,
    blobs: ReadonlyArray<{ digest: string; bytes: Uint8Array }>,
  ): Promise<void> {
    await this.query(
      `WITH o AS (INSERT INTO ordivon_objects (digest, bytes) SELECT * FROM unnest($1::text[], $2::bytea[]) ON CONFLICT DO NOTHING)
       INSERT INTO ordivon_blobs (digest, bytes) SELECT * FROM unnest($3::text[], $4::bytea[]) ON CONFLICT DO NOTHING`,
      [
        objects.map((o) => o.digest),
        objects.map((o) => Buffer.from(o.text)),
        blobs.map((b) => b.digest),
        blobs.map((b) => Buffer.from(b.bytes)),
      ],
    );
  }

  // ---- reads -------------------------------------------------------------------------------------

  /** Who holds a Task's lease now: a Host id, null when nobody does (it is free or expired), undefined when there is no such Task. */
  async owner(taskId: string): Promise<string | null | undefined> {
    try {
      return await readOwner(this.pool, taskId);
    } catch (error) {
      throw storeErrorOf(error, { taskId });
    }
  }

  /**
   * Who holds a Task's lease now and the URL that Host advertises (null when it published none,
   * or nobody holds the lease); undefined when there is no such Task.
   */
  async ownerAndUrl(taskId: string): Promise<{ owner: string | null; url: string | null } | undefined> {
    const { rows } = await this.query(
      `SELECT CASE WHEN t.lease_until >= now() THEN t.lease_owner END AS owner,
         CASE WHEN t.lease_until >= now() THEN h.advertised_url END AS url
       FROM ordivon_tasks t LEFT JOIN ordivon_hosts h ON h.host_id = t.lease_owner
       WHERE t.task_id = $1 AND t.revision > 0`,
      [taskId],
    );
    return rows.length === 0 ? undefined : OwnerUrlRow.parse(rows[0]);
  }

  /** A Task's events after revision `after`, its projection, claims and the objects it wrote or named. */
  async copyTask(taskId: string, after = 0): Promise<TaskCopy> {
    const read = async (client: pg.PoolClient) => {
      // One snapshot: events, projection and claims agree with each other.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const events = await client.query(
        `SELECT revision, digest, record FROM ordivon_events WHERE task_id = $1 AND revision > $2 ORDER BY revision`,
        [taskId, after],
      );
      const projection = await client.query(`SELECT record FROM ordivon_projections WHERE task_id = $1`, [taskId]);
      const claims = await client.query(`SELECT kind, key, revision, digest FROM ordivon_claims WHERE task_id = $1`, [
        taskId,
      ]);
      const objects = await client.query(
        `SELECT o.digest, o.bytes FROM ordivon_task_objects l JOIN ordivon_objects o USING (digest) WHERE l.task_id = $1`,
        [taskId],
      );
      const blobs = await client.query(
        `SELECT b.digest, b.bytes FROM ordivon_task_objects l JOIN ordivon_blobs b USING (digest) WHERE l.task_id = $1`,
        [taskId],
      );
      await client.query('COMMIT');
      const details = { taskId };
      return {
        taskId,
        events: events.rows.map((row) => {
          const { revision, digest, record } = EventRow.parse(row);
          return { revision, digest, record: parseStored(EventRecord, record, { ...details, revision }) };
        }),
        projection:
          projection.rows.length === 0
            ? undefined
            : parseStored(Projection, ProjectionRow.parse(projection.rows[0]).record, {
                ...details,
                object: 'projection',
              }),
        objects: objects.rows.map((row) => BytesRow.parse(row)),
        blobs: blobs.rows.map((row) => BytesRow.parse(row)),
        claims: claims.rows.map((row) => {
          const { kind, key, revision, digest } = ClaimRow.parse(row);
          return { kind, key, entry: digest === null ? { revision } : { revision, digest } };
        }),
      };
    };
    try {
      return await withClient(this.pool, read);
    } catch (error) {
      throw storeErrorOf(error, { taskId });
    }
  }

  /** A Task as the shared history holds it now, read in one snapshot (for a Host that does not serve it). */
  readTask(taskId: string): Promise<SharedTask | undefined> {
    return readTask(this.pool, taskId);
  }

  /** A Task's events in (after, upTo], each with the Host that wrote it. */
  readEvents(taskId: string, after: number, upTo: number): Promise<SharedEvent[]> {
    return readEvents(this.pool, taskId, after, upTo);
  }

  /** A watch of every Task's head on this journal's pool (and a LISTEN connection of its own); call `start()`. */
  watch(options: Omit<TaskWatchOptions, 'url' | 'hostId' | 'statementTimeoutMs' | 'connectTimeoutMs'>): TaskWatch {
    return new TaskWatch(this.pool, {
      ...options,
      url: this.options.url,
      hostId: this.hostId,
      statementTimeoutMs: this.options.statementTimeoutMs,
      connectTimeoutMs: this.options.connectTimeoutMs,
    });
  }

  private query(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    return queryOrFail(this.pool, text, values);
  }
}
