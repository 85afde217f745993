import pg from 'pg';
import { z } from 'zod';
import type { Projection } from '../records.js';
import { COMMITS_CHANNEL } from './commit-notifier.js';
import { storeErrorOf } from './stored.js';
import { EVENT_COLUMNS, eventOf, projectionOf, type SharedEvent } from './task-reads.js';

/** What the watch found new of one Task in one poll. */
export interface WatchedCommits {
  taskId: string;
  /** The head the watch had seen before (0 for a Task new since it started). */
  after: number;
  /** Who held the Task's lease when polled (null: nobody). */
  owner: string | null;
  /**
   * The events after `after` up to the head polled, in revision order — except the ones this Host
   * wrote (its own commits were reported where they were made), so they may skip a revision
   * around a handover.
   */
  events: SharedEvent[];
  /** The Task's projection at the head polled (the last revision). */
  projection: Projection | undefined;
}

export interface TaskWatchOptions {
  /** `postgres://…`, for the dedicated LISTEN connection. */
  url: string;
  /** This Host: events it wrote are not read back. */
  hostId: string;
  /** How often every head is read (default 1000 ms): the rule that delivers every commit. */
  pollMs?: number | undefined;
  /** LISTEN on `ordivon_commits` for early polls (default true). */
  listen?: boolean | undefined;
  /**
   * How long after losing the LISTEN connection it is opened again (default the smaller of 1 s and
   * `pollMs`); each attempt that fails doubles the wait, up to `reconnectMaxMs` (default 30 s), and
   * a connection that listens again starts over from `reconnectMs`.
   */
  reconnectMs?: number | undefined;
  reconnectMaxMs?: number | undefined;
  /** Told the wait before each attempt to open the LISTEN connection again. */
  onReconnectScheduled?: ((delayMs: number) => void) | undefined;
  /** Client-side limit on the LISTEN statement (and on connecting, unless `connectTimeoutMs` is given). */
  statementTimeoutMs?: number | undefined;
  connectTimeoutMs?: number | undefined;
  /** Hears each Task that moved, Task after Task, one poll at a time; what it throws is dropped. */
  onCommits(commits: WatchedCommits): void | Promise<void>;
  /**
   * Whether the new events of a Task that moved are wanted (default: every Task's). A Task not
   * wanted has only its head read, and its commits are not reported.
   */
  wants?: ((taskId: string) => boolean) | undefined;
  /**
   * Whether any Task's events may be wanted now (default true). When not, a notification does not
   * make a poll early: the polls every `pollMs` still keep the heads, so nothing old is reported
   * once a Task is wanted again.
   */
  wantsAny?: (() => boolean) | undefined;
  /** Told each time the LISTEN connection is (again) listening. */
  onListening?: (() => void) | undefined;
}

export const DEFAULT_POLL_MS = 1000;

const HeadRow = z.object({
  task_id: z.string(),
  revision: z.coerce.number().int().positive(),
  lease_owner: z.string().nullable(),
});

/**
 * Follows the commits other Hosts make (docs/many-hosts.md#wake-ups). Polling is the rule: every
 * `pollMs` it reads every Task's head and, for each that moved, the new events and the projection,
 * all in one snapshot. Positions are per-Task revisions, never a global sequence: a sequence value
 * becomes visible at commit, so a reader that advanced to the highest one seen would skip a lower
 * one committed later. A NOTIFY on `ordivon_commits` (one dedicated connection, not the pool,
 * which would drop LISTEN with its idle clients) only makes the next poll early; the connection
 * is opened again after it fails, and a poll follows each (re)LISTEN, as notifications sent
 * meanwhile are gone.
 *
 * The first poll only learns the heads: commits made before it are not reported.
 */
export class TaskWatch {
  private readonly pollMs: number;
  private seen: Map<string, number> | undefined;
  private listener: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  /** Attempts to open the LISTEN connection again since it last listened (the backoff's exponent). */
  private failures = 0;
  private closed = false;
  /** The poll running or last run; polls never overlap, so each Task's batches come in order. */
  private current: Promise<void> = Promise.resolve();
  /** A poll asked for and not started yet: more asks share it. */
  private queued: Promise<void> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: TaskWatchOptions,
  ) {
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  }

  /** Opens the LISTEN connection (when asked; failing that, polling goes on alone) and takes the first poll. */
  async start(): Promise<void> {
    if (this.options.listen !== false) await this.listen(false);
    await this.poll();
    this.tick();
  }

  /** One poll after the one running, if any; polls asked for before it starts are one. Never rejects. */
  poll(): Promise<void> {
    if (this.queued) return this.queued;
    const next = this.current.then(() => {
      this.queued = undefined;
      return this.closed ? undefined : this.pollOnce().catch(() => undefined);
    });
    this.queued = next;
    this.current = next;
    return next;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.reconnect);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
    await this.current;
  }

  private tick(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.poll().then(() => this.tick()), this.pollMs);
  }

  private async listen(andPoll: boolean): Promise<void> {
    if (this.closed) return;
    const timeout = this.options.statementTimeoutMs;
    const connectTimeout = this.options.connectTimeoutMs ?? timeout;
    const client = new pg.Client({
      connectionString: this.options.url,
      // Names the connection in pg_stat_activity: an operator (or a test) finds which Host's listener it is.
      application_name: `ordivon-listen:${this.options.hostId}`.slice(0, 63),
      keepAlive: true,
      ...(timeout ? { query_timeout: timeout } : {}),
      ...(connectTimeout ? { connectionTimeoutMillis: connectTimeout } : {}),
    });
    this.listener = client;
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel === COMMITS_CHANNEL && this.options.wantsAny?.() !== false) void this.poll();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${COMMITS_CHANNEL}`);
    } catch {
      this.lost(client);
      return;
    }
    if (this.listener !== client) return;
    this.failures = 0;
    this.options.onListening?.();
    // Notifications sent while it was not listening are gone: this poll catches up on every head.
    if (andPoll) await this.poll();
  }

  /** The LISTEN connection failed or ended: open another later (polling goes on meanwhile). */
  private lost(client: pg.Client): void {
    if (this.listener !== client) return;
    this.listener = undefined;
    void client.end().catch(() => undefined);
    if (this.closed) return;
    const base = this.options.reconnectMs ?? Math.min(1000, this.pollMs);
    const delay = Math.min(this.options.reconnectMaxMs ?? 30_000, base * 2 ** Math.min(this.failures++, 20));
    this.options.onReconnectScheduled?.(delay);
    this.reconnect = setTimeout(() => void this.listen(true), delay);
  }

  private async pollOnce(): Promise<void> {
    const client = await this.pool.connect();
    let found: WatchedCommits[];
    let heads: Array<z.infer<typeof HeadRow>>;
    let failed = false;
    try {
      // One snapshot: the heads, the events up to them and the projections at them agree.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const read = await client.query(`SELECT task_id, revision, lease_owner FROM ordivon_tasks WHERE revision > 0`);
      heads = read.rows.map((row) => HeadRow.parse(row));
      found = this.seen ? await this.readMoved(client, this.seen, heads) : [];
      await client.query('COMMIT');
    } catch (error) {
      failed = true;
      throw storeErrorOf(error, {});
    } finally {
      // A failed connection is not pooled again (see readTask in task-reads.ts).
      client.release(failed);
    }
    const seen = (this.seen ??= new Map());
    for (const head of heads) seen.set(head.task_id, head.revision);
    for (const commits of found) {
      if (this.closed) return;
      try {
        await this.options.onCommits(commits);
      } catch {
        // The listener's failure is its own; the next Task's commits still go out.
      }
    }
  }

  private async readMoved(
    client: pg.PoolClient,
    seen: Map<string, number>,
    heads: Array<z.infer<typeof HeadRow>>,
  ): Promise<WatchedCommits[]> {
    const wants = this.options.wants;
    const moved = heads.filter(
      (h) => h.revision > (seen.get(h.task_id) ?? 0) && (wants === undefined || wants(h.task_id)),
    );
    if (moved.length === 0) return [];
    const events = await client.query(
      `SELECT ${EVENT_COLUMNS}
       FROM unnest($1::text[], $2::bigint[]) AS s(task_id, after)
       JOIN ordivon_events e ON e.task_id = s.task_id AND e.revision > s.after
       WHERE e.host_id <> $3
       ORDER BY e.task_id, e.revision`,
      [moved.map((h) => h.task_id), moved.map((h) => seen.get(h.task_id) ?? 0), this.options.hostId],
    );
    const byTask = new Map<string, SharedEvent[]>();
    for (const row of events.rows) {
      const { taskId, ...event } = eventOf(row);
      let list = byTask.get(taskId);
      if (!list) byTask.set(taskId, (list = []));
      list.push(event);
    }
    if (byTask.size === 0) return [];
    const projections = await client.query(
      `SELECT task_id, record FROM ordivon_projections WHERE task_id = ANY($1::text[])`,
      [[...byTask.keys()]],
    );
    const projectionOfTask = new Map(projections.rows.map(projectionOf).map((p) => [p.taskId, p.projection]));
    return moved
      .filter((h) => byTask.has(h.task_id))
      .map((h) => ({
        taskId: h.task_id,
        after: seen.get(h.task_id) ?? 0,
        owner: h.lease_owner,
        events: byTask.get(h.task_id)!,
        projection: projectionOfTask.get(h.task_id),
      }));
  }
}
