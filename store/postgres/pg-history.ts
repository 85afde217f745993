import type pg from 'pg';
import type { AuthorityCommit, StoreAuthority } from '../authority.js';
import { PgAppends } from './pg-appends.js';
import { PgJobs, type StoredJob } from './pg-jobs.js';
import { PgLeases, type HeldLease } from './pg-leases.js';
import { openPool, redact, type PoolOptions } from './pg-pool.js';
import { ensureSchema } from './pg-schema.js';
import { storeErrorOf } from './stored.js';
import { copyTask, type TaskCopy } from './task-copy.js';
import { readEvents, readOwner, readOwnerAndUrl, readTask, type SharedEvent, type SharedTask } from './task-reads.js';
import { TaskWatch, type TaskWatchOptions } from './task-watch.js';

/** The pool's options (pg-pool.ts) and this Host's part in the cluster. */
export interface PgHistoryOptions extends PoolOptions {
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

/**
 * The shared history on PostgreSQL as one Host uses it, all on one pool (pg-pool.ts): its appends
 * fenced by its leases (pg-appends.ts, the `StoreAuthority` its LMDB store mirrors), its leases
 * and liveness (pg-leases.ts), the Runtime jobs of every Host (pg-jobs.ts), reads of any Task
 * (task-reads.ts, task-copy.ts) and the watch of every Task's head (task-watch.ts).
 */
export class PgHistory implements StoreAuthority {
  readonly hostId: string;
  readonly leaseMs: number;
  /** The epoch of each Task this Host holds, and its heartbeat. */
  private readonly lease: PgLeases;
  private readonly jobs: PgJobs;
  private readonly appends: PgAppends;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: PgHistoryOptions,
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
    this.appends = new PgAppends({
      pool,
      hostId: this.hostId,
      leaseMs: this.leaseMs,
      leases: this.lease,
      notify: options.notify,
      notifyWindowMs: options.notifyWindowMs,
    });
  }

  /** Connects, creates the tables when absent (`format_unknown` for another schema version) and registers this Host. */
  static async open(options: PgHistoryOptions): Promise<PgHistory> {
    const pool = openPool(options);
    const history = new PgHistory(pool, options);
    try {
      await ensureSchema(pool);
      await history.heartbeat();
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw storeErrorOf(error, { url: redact(options.url) });
    }
    return history;
  }

  async close(): Promise<void> {
    await this.appends.close();
    await this.pool.end();
  }

  // ---- appends (pg-appends.ts) ----------------------------------------------------------------

  commit(append: AuthorityCommit): Promise<{ duplicate: false } | { duplicate: true; digest: string }> {
    return this.appends.commit(append);
  }

  putObjects(
    objects: ReadonlyArray<{ digest: string; text: string }>,
    blobs: ReadonlyArray<{ digest: string; bytes: Uint8Array }>,
  ): Promise<void> {
    return this.appends.putObjects(objects, blobs);
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
   * each at a new epoch; with `'own-before'`, those leased to this Host id by its previous process.
   */
  claim(limit?: number, which?: 'free' | 'own-before'): Promise<HeldLease[]> {
    return this.lease.claim(limit, which);
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

  // ---- reads (task-reads.ts, task-copy.ts) and the watch (task-watch.ts) -----------------------

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
  ownerAndUrl(taskId: string): Promise<{ owner: string | null; url: string | null } | undefined> {
    return readOwnerAndUrl(this.pool, taskId);
  }

  /** A Task's events after revision `after`, its projection, claims and the objects it wrote or named. */
  copyTask(taskId: string, after = 0): Promise<TaskCopy> {
    return copyTask(this.pool, taskId, after);
  }

  /** A Task as the shared history holds it now, read in one snapshot (for a Host that does not serve it). */
  readTask(taskId: string): Promise<SharedTask | undefined> {
    return readTask(this.pool, taskId);
  }

  /** A Task's events in (after, upTo], each with the Host that wrote it. */
  readEvents(taskId: string, after: number, upTo: number): Promise<SharedEvent[]> {
    return readEvents(this.pool, taskId, after, upTo);
  }

  /** A watch of every Task's head on this history's pool (and a LISTEN connection of its own); call `start()`. */
  watch(options: Omit<TaskWatchOptions, 'url' | 'hostId' | 'statementTimeoutMs' | 'connectTimeoutMs'>): TaskWatch {
    return new TaskWatch(this.pool, {
      ...options,
      url: this.options.url,
      hostId: this.hostId,
      statementTimeoutMs: this.options.statementTimeoutMs,
      connectTimeoutMs: this.options.connectTimeoutMs,
    });
  }
}
