import type pg from 'pg';
import { z } from 'zod';
import { queryOrFail } from './pg-pool.js';

/** A Task whose lease this Host holds, at the epoch it was acquired with. */
export interface HeldLease {
  taskId: string;
  epoch: number;
}

export interface PgLeasesOptions {
  pool: pg.Pool;
  /** This Host's name in lease rows and the hosts table. */
  hostId: string;
  /** How long a lease (and a heartbeat) lasts without renewal (database clock). */
  leaseMs: number;
  /** Where clients reach this Host's control API (null: nowhere), published beside its heartbeat. */
  advertisedUrl: string | null;
}

const TaskRow = z.object({ task_id: z.string(), lease_epoch: z.coerce.number().int().positive() });
const RenewedRow = z.object({ task_id: z.string() });
const AliveRow = z.object({ alive: z.boolean() });

/**
 * This Host's leases on Tasks of the shared history (`ordivon_tasks`, logged in
 * `ordivon_lease_log`) and its liveness (`ordivon_hosts`): the epoch each lease was acquired with
 * is what `ordivon_append` fences an append with (PgAppends.commit).
 */
export class PgLeases {
  /** The epoch of each Task this Host holds. */
  private readonly held = new Map<string, number>();
  private readonly pool: pg.Pool;
  private readonly hostId: string;
  private readonly leaseMs: number;
  private advertisedUrl: string | null;

  constructor(options: PgLeasesOptions) {
    this.pool = options.pool;
    this.hostId = options.hostId;
    this.leaseMs = options.leaseMs;
    this.advertisedUrl = options.advertisedUrl;
  }

  /** Tasks this Host holds, with the epoch of each. */
  leases(): HeldLease[] {
    return [...this.held].map(([taskId, epoch]) => ({ taskId, epoch }));
  }

  holds(taskId: string): boolean {
    return this.held.has(taskId);
  }

  /** The epoch this Host holds `taskId` at; undefined when it holds no lease on it. */
  epochOf(taskId: string): number | undefined {
    return this.held.get(taskId);
  }

  /** Notes a lease the authority granted with an append (a new Task's first, at epoch 1). */
  hold(taskId: string, epoch: number): void {
    this.held.set(taskId, epoch);
  }

  /** Forgets a lease the authority said is lost. */
  drop(taskId: string): void {
    this.held.delete(taskId);
  }

  /**
   * Takes up to `limit` Tasks nobody holds or whose lease expired (database clock), each at a new
   * epoch. Rows an append holds are skipped (`SKIP LOCKED`): the next claim takes them. With
   * `'own-before'` it takes the Tasks leased to this Host id that it does not hold, whatever their
   * expiry, instead: a Host id names one Host, so such a lease was its own before it restarted,
   * and the new epoch fences off anything of that process still writing.
   */
  async claim(limit = 1000, which: 'free' | 'own-before' = 'free'): Promise<HeldLease[]> {
    const free =
      which === 'free'
        ? `lease_owner IS NULL OR lease_until < now()`
        : `lease_owner = $1 AND NOT (task_id = ANY($4::text[]))`;
    const { rows } = await this.query(
      `WITH free AS (
         SELECT task_id FROM ordivon_tasks
         WHERE revision > 0 AND (${free})
         ORDER BY task_id LIMIT $2 FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE ordivon_tasks t SET lease_owner = $1, lease_epoch = t.lease_epoch + 1,
           lease_until = now() + $3 * interval '1 millisecond'
         FROM free WHERE t.task_id = free.task_id
         RETURNING t.task_id, t.lease_epoch, t.revision),
       logged AS (
         INSERT INTO ordivon_lease_log (task_id, lease_epoch, host_id, at, revision)
         SELECT task_id, lease_epoch, $1, now(), revision FROM claimed)
       SELECT task_id, lease_epoch FROM claimed`,
      which === 'free' ? [this.hostId, limit, this.leaseMs] : [this.hostId, limit, this.leaseMs, [...this.held.keys()]],
    );
    const taken = rows.map((row) => TaskRow.parse(row)).map((r) => ({ taskId: r.task_id, epoch: r.lease_epoch }));
    for (const { taskId, epoch } of taken) this.held.set(taskId, epoch);
    return taken;
  }

  /** Extends every lease still held at its epoch; returns the Tasks whose lease was lost (another Host took them). */
  async renew(): Promise<string[]> {
    const held = this.leases();
    if (held.length === 0) {
      await this.heartbeat();
      return [];
    }
    const { rows } = await this.query(
      `WITH renewed AS (
         UPDATE ordivon_tasks t SET lease_until = now() + $4 * interval '1 millisecond'
         FROM unnest($2::text[], $3::bigint[]) AS h(task_id, epoch)
         WHERE t.task_id = h.task_id AND t.lease_owner = $1 AND t.lease_epoch = h.epoch
         RETURNING t.task_id),
       beat AS (
         UPDATE ordivon_hosts SET heartbeat_until = now() + $4 * interval '1 millisecond', advertised_url = $5
         WHERE host_id = $1)
       SELECT task_id FROM renewed`,
      [this.hostId, held.map((h) => h.taskId), held.map((h) => h.epoch), this.leaseMs, this.advertisedUrl],
    );
    const kept = new Set(rows.map((row) => RenewedRow.parse(row).task_id));
    // A Task claimed again meanwhile (its lease had run out, and this Host took it back at a new
    // epoch while the renewal was in flight) is held, not lost.
    const lost = held.filter((h) => !kept.has(h.taskId) && this.held.get(h.taskId) === h.epoch).map((h) => h.taskId);
    for (const taskId of lost) this.held.delete(taskId);
    return lost;
  }

  /** Gives Tasks up (drain): another Host may claim them at once. */
  async release(taskIds: string[] = [...this.held.keys()]): Promise<void> {
    const held = taskIds.flatMap((taskId) => {
      const epoch = this.held.get(taskId);
      return epoch === undefined ? [] : [{ taskId, epoch }];
    });
    for (const { taskId } of held) this.held.delete(taskId);
    if (held.length === 0) return;
    await this.query(
      `UPDATE ordivon_tasks t SET lease_owner = NULL, lease_until = now()
       FROM unnest($2::text[], $3::bigint[]) AS h(task_id, epoch)
       WHERE t.task_id = h.task_id AND t.lease_owner = $1 AND t.lease_epoch = h.epoch`,
      [this.hostId, held.map((h) => h.taskId), held.map((h) => h.epoch)],
    );
  }

  // ---- liveness --------------------------------------------------------------------------------

  /** Records that this Host is alive until now + the lease time (database clock). */
  async heartbeat(): Promise<void> {
    await this.query(
      `INSERT INTO ordivon_hosts (host_id, pid, started_at, heartbeat_until, advertised_url)
       VALUES ($1, $2, now(), now() + $3 * interval '1 millisecond', $4)
       ON CONFLICT (host_id) DO UPDATE SET pid = EXCLUDED.pid, heartbeat_until = EXCLUDED.heartbeat_until, stopped = false,
         advertised_url = EXCLUDED.advertised_url`,
      [this.hostId, process.pid, this.leaseMs, this.advertisedUrl],
    );
  }

  /** Publishes where clients reach this Host (null: nowhere), beside its heartbeat; later heartbeats keep it. */
  async advertise(url: string | null): Promise<void> {
    // Kept first: when the update fails, the next renewal or heartbeat publishes it.
    this.advertisedUrl = url;
    await this.query(`UPDATE ordivon_hosts SET advertised_url = $2 WHERE host_id = $1`, [this.hostId, url]);
  }

  /** Whether a Host's heartbeat is current (database clock); false for a Host never seen or stopped. */
  async hostAlive(hostId: string): Promise<boolean> {
    const { rows } = await this.query(
      `SELECT (heartbeat_until >= now() AND NOT stopped) AS alive FROM ordivon_hosts WHERE host_id = $1`,
      [hostId],
    );
    return rows.length > 0 && AliveRow.parse(rows[0]).alive;
  }

  /** Marks this Host stopped (after its leases were released). */
  async leave(): Promise<void> {
    await this.query(`UPDATE ordivon_hosts SET stopped = true, heartbeat_until = now() WHERE host_id = $1`, [
      this.hostId,
    ]);
  }

  private query(text: string, values: unknown[]): Promise<pg.QueryResult> {
    return queryOrFail(this.pool, text, values);
  }
}
