import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { StoreError, type EventStore } from '../../store/index.js';
import {
  PgHistory,
  DEFAULT_LEASE_MS,
  redact,
  type TaskWatch,
  type WatchedCommits,
} from '../../store/postgres/index.js';
import { HostError, hostErrorOf } from '../errors.js';

/** How a Host joins several others on one PostgreSQL history (`createSupervisor({ store })`). */
export interface ClusterOptions {
  /** `postgres://…`: the shared history (`--store`, `ORDIVON_STORE`). */
  url: string;
  /** This Host's name in lease and job rows; default `<hostname>-<pid>-<random>` (unique per process). */
  hostId?: string | undefined;
  /** A lease's length on the database clock (default 10 s): how long a silent Host keeps its Tasks. */
  leaseMs?: number | undefined;
  /** How often leases are renewed and free Tasks claimed (default a third of the lease). */
  renewEveryMs?: number | undefined;
  /** Client-side limit on one statement, so a blackholed connection fails instead of hanging (default: the lease). */
  statementTimeoutMs?: number | undefined;
  /** Client-side limit on opening a database connection (default: the statement timeout). */
  connectTimeoutMs?: number | undefined;
  /**
   * Where clients reach this Host's control API, published beside its heartbeat: a send to a Task
   * another Host serves answers `task_elsewhere` with that Host's URL (`serve --advertise-url`).
   */
  advertisedUrl?: string | undefined;
  /**
   * How often this Host reads every Task's head to report other Hosts' commits to its subscribers
   * (default 1000 ms): the rule; a NOTIFY only makes a poll early (docs/many-hosts.md#wake-ups).
   */
  pollMs?: number | undefined;
  /**
   * Send a NOTIFY after commits and LISTEN for other Hosts' (default true). Turn it off where
   * LISTEN cannot work, as behind pgbouncer in transaction mode: polling alone then reports commits.
   */
  notify?: boolean | undefined;
  /** Told of each lease this Host acquires or loses (for logs and metrics); it must not throw. */
  onLease?: ((event: LeaseEvent) => void) | undefined;
}

/** A lease change of this Host: a Task claimed at `epoch`, or one it no longer holds (taken over, or its lease ran out). */
export type LeaseEvent = { kind: 'acquired'; taskId: string; epoch: number } | { kind: 'lost'; taskId: string };

/** What the Supervisor does when the cluster hands it a Task or takes one away. */
export interface ClusterHooks {
  /** A Task this Host now holds and whose events are in the mirror: rebuild and serve it. */
  adopt(taskId: string): Promise<void>;
  /** A Task this Host no longer serves (another Host took it, or it is to be copied again): stop serving it at once. */
  lost(taskId: string): void;
  /** Whether the Supervisor serves the Task now. */
  serves(taskId: string): boolean;
  /** Commits of a Task that another Host made, as the watch found them (one Task at a time, in order). */
  commits(commits: WatchedCommits): Promise<void>;
  /** Whether anyone here asks for other Hosts' commits of the Task: the watch reads only those. */
  wantsCommits(taskId: string): boolean;
  /** Whether anyone here may ask for other Hosts' commits: without, a NOTIFY does not make the watch poll early. */
  wantsAnyCommits(): boolean;
}

/**
 * The most free Tasks a Host claims at a time (one batch at boot; batch after batch in a keeper
 * round). Claimed Tasks are copied and adopted one by one, so a single large claim — a thousand
 * Tasks of a Host that died — would leave them all claimed by one Host and unserved until the last
 * is adopted. In small batches every live Host takes a share, and each claimed Task is served
 * within seconds.
 */
export const CLAIM_BATCH = 32;

export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//.test(value);
}

export function defaultHostId(): string {
  return `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

/**
 * This Host's membership of a cluster sharing one PostgreSQL history (docs/many-hosts.md): the
 * local store mirrors the Tasks it holds; a keeper renews their leases, notices the ones another
 * Host took (the Task stops here) and claims Tasks whose lease expired — a Host that died or
 * stopped answering — copying each into the mirror before the Supervisor rebuilds it. Time only
 * decides who may take a Task over; safety comes from the epoch every append is fenced with.
 */
export class Cluster {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  /** The Supervisor's hooks, once it serves; Tasks lost before that wait in `lostEarly`. */
  private hooks: ClusterHooks | undefined;
  private readonly lostEarly = new Set<string>();
  private stopped = false;
  /** Tasks to copy again from the authority before serving them (a write's outcome was unknown). */
  private readonly reload = new Set<string>();
  /**
   * Tasks this Host holds but could not serve (copying or rebuilding failed: damaged history, a
   * database error), with why. They stay held — another Host would fail the same way — and are
   * tried again each round until they can be served.
   */
  private readonly unserved = new Map<string, string>();
  private watch: TaskWatch | undefined;
  /** Each Task's copy and adoption in progress (a keeper round's, a re-read's): one at a time per Task. */
  private readonly serving = new Map<string, Promise<void>>();
  /** Why the database is taken as unreachable (the last lease renewal or keeper round failed), or null. */
  private cutOff: { since: string; message: string } | null = null;

  private constructor(
    readonly history: PgHistory,
    private readonly renewEveryMs: number,
    private readonly watchOptions: { pollMs?: number | undefined; listen: boolean },
    private readonly onLease: (event: LeaseEvent) => void = () => undefined,
  ) {}

  static async join(options: ClusterOptions): Promise<Cluster> {
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    try {
      const history = await PgHistory.open({
        url: options.url,
        hostId: options.hostId ?? defaultHostId(),
        leaseMs,
        statementTimeoutMs: options.statementTimeoutMs ?? leaseMs,
        ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
        ...(options.advertisedUrl !== undefined ? { advertisedUrl: options.advertisedUrl } : {}),
        notify: options.notify !== false,
      });
      return new Cluster(
        history,
        options.renewEveryMs ?? Math.max(50, Math.floor(leaseMs / 3)),
        { pollMs: options.pollMs, listen: options.notify !== false },
        options.onLease,
      );
    } catch (error) {
      if (error instanceof StoreError) throw hostErrorOf(error);
      throw new HostError('storage_failed', `cannot join ${redact(options.url)}: ${(error as Error).message}`);
    }
  }

  get hostId(): string {
    return this.history.hostId;
  }

  /**
   * Before validation: claims the Tasks this Host id held before it restarted, then free Tasks (a batch of them; the keeper takes more), drops from the mirror the Tasks this Host no longer
   * holds, and copies the held ones up to the authority's head. Validation then checks exactly the
   * Tasks this Host serves.
   */
  async prepare(store: EventStore): Promise<void> {
    // This Host id's leases from before a restart first, all of them, without waiting for them to
    // run out: the process that held them is this Host's previous one.
    for (;;) {
      const own = await this.history.claim(CLAIM_BATCH, 'own-before');
      for (const { taskId, epoch } of own) this.onLease({ kind: 'acquired', taskId, epoch });
      if (own.length < CLAIM_BATCH) break;
    }
    for (const { taskId, epoch } of await this.history.claim(CLAIM_BATCH))
      this.onLease({ kind: 'acquired', taskId, epoch });
    this.startRenewing();
    for (const taskId of store.taskIds()) if (!this.history.holds(taskId)) await store.forget(taskId);
    for (const { taskId } of this.history.leases()) await this.copy(store, taskId);
  }

  /**
   * Starts the keeper and the watch of other Hosts' commits (after the Supervisor serves);
   * resolves once the watch has learnt every head, so commits made after it are reported. The
   * database being unreachable then does not fail it: the watch learns the heads at its next poll.
   */
  async start(store: () => EventStore | undefined, hooks: ClusterHooks): Promise<void> {
    this.hooks = hooks;
    for (const taskId of this.lostEarly) hooks.lost(taskId);
    this.lostEarly.clear();
    const run = () => {
      if (this.stopped) return;
      this.ticking = this.tick(store, hooks).finally(() => {
        this.ticking = undefined;
        if (!this.stopped) this.timer = setTimeout(run, this.renewEveryMs);
      });
    };
    this.timer = setTimeout(run, this.renewEveryMs);
    if (this.stopped) return;
    this.watch = this.history.watch({
      ...this.watchOptions,
      onCommits: (commits) => hooks.commits(commits),
      wants: (taskId) => hooks.wantsCommits(taskId),
      wantsAny: () => hooks.wantsAnyCommits(),
    });
    await this.watch.start();
  }

  /** One poll of the watch now (after the one running, if any); resolves when its commits were handed on. */
  async poll(): Promise<void> {
    await this.watch?.poll();
  }

  /**
   * One keeper round: renew (Tasks whose epoch moved are lost here), copy again the Tasks marked
   * for reload, claim free Tasks and adopt them. Never throws: a database that cannot be reached
   * is tried again next round (the leases run out meanwhile, and the Tasks move to a Host that can).
   */
  async tick(store: () => EventStore | undefined, hooks: ClusterHooks): Promise<void> {
    try {
      for (const taskId of await this.history.renew()) this.lose(taskId, hooks);
      this.reached();
      const open = store();
      if (!open || this.stopped) return;
      for (const taskId of [...this.reload, ...this.unserved.keys()]) {
        this.reload.delete(taskId);
        if (this.history.holds(taskId)) await this.serve(open, taskId, hooks, true);
        else this.unserved.delete(taskId);
      }
      // Batch after batch until one comes back short: the Tasks of a Host that died are served
      // within this round, not one batch per renewal interval, while the other Hosts' rounds take
      // batches of their own beside it (the claim skips rows another claim holds).
      for (;;) {
        const claimed = await this.history.claim(CLAIM_BATCH);
        for (const { taskId, epoch } of claimed) {
          this.onLease({ kind: 'acquired', taskId, epoch });
          if (this.stopped) return;
          // Its own lease ran out unrenewed (this Host was paused past it) and it claimed the Task
          // again at a new epoch: the actor of the old epoch goes, a fresh one is built.
          if (hooks.serves(taskId)) this.lose(taskId, hooks);
          await this.serve(open, taskId, hooks, false);
        }
        if (claimed.length < CLAIM_BATCH || this.stopped) break;
      }
    } catch (error) {
      // Unreachable database: the next round tries again (meanwhile the leases run out).
      this.failed(error);
    }
  }

  /** What the keeper holds and could not serve yet, with why (for /health and operators). */
  problems(): Array<{ taskId: string; problem: string }> {
    return [...this.unserved].map(([taskId, problem]) => ({ taskId, problem }));
  }

  /**
   * Why this Host cannot reach its database, or null: the last lease renewal (or keeper round, or
   * append) failed and none has succeeded since. Its leases run out meanwhile and other Hosts take
   * its Tasks, so a load balancer should send nothing here (`GET /ready`).
   */
  unreachable(): { since: string; message: string } | null {
    return this.cutOff;
  }

  /** A statement on the database failed (a renewal, a keeper round, an append whose outcome is unknown). */
  failed(error: unknown): void {
    this.cutOff ??= {
      since: new Date().toISOString(),
      message: error instanceof Error ? error.message : String(error),
    };
  }

  private reached(): void {
    this.cutOff = null;
  }

  /**
   * Copies a Task this Host holds again from the authority and serves the new copy in place of the
   * actor it had: that actor's append was refused `revision_conflict` under a lease this Host holds
   * (it claimed the Task back after another Host wrote to it, and the keeper round had not rebuilt
   * it yet). Not a lease change: `onLease` is not told.
   */
  async reread(store: EventStore, taskId: string, hooks: ClusterHooks): Promise<void> {
    hooks.lost(taskId);
    await this.serve(store, taskId, hooks, false);
  }

  private serve(store: EventStore, taskId: string, hooks: ClusterHooks, fresh: boolean): Promise<void> {
    const next = (this.serving.get(taskId) ?? Promise.resolve()).then(() => this.serveNow(store, taskId, hooks, fresh));
    this.serving.set(taskId, next);
    void next.then(() => {
      if (this.serving.get(taskId) === next) this.serving.delete(taskId);
    });
    return next;
  }

  private async serveNow(store: EventStore, taskId: string, hooks: ClusterHooks, fresh: boolean): Promise<void> {
    try {
      if (fresh) await store.forget(taskId);
      await this.copy(store, taskId);
      // A round may work through hundreds of Tasks; the renewer can learn meanwhile that another
      // Host took this one. Serving it then would answer lease_lost, not task_elsewhere, and show a
      // Task this Host does not hold.
      if (this.history.holds(taskId)) await hooks.adopt(taskId);
      if (!this.history.holds(taskId)) this.lose(taskId, hooks);
      this.unserved.delete(taskId);
    } catch (error) {
      this.unserved.set(taskId, error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * Renews every `renewEveryMs` on a timer of its own, from the first claim until `leave`: copying
   * and adopting many Tasks (at boot, in a keeper round after a Host died) can take longer than a
   * lease, and renewal waiting behind it would lose every lease this Host holds, to be taken over
   * and taken back in turn.
   */
  private startRenewing(): void {
    const run = () => {
      if (this.stopped) return;
      this.renewing = this.renewOnce().finally(() => {
        this.renewing = undefined;
        if (!this.stopped) this.renewTimer = setTimeout(run, this.renewEveryMs);
      });
    };
    this.renewTimer = setTimeout(run, this.renewEveryMs);
  }

  private async renewOnce(): Promise<void> {
    try {
      for (const taskId of await this.history.renew()) {
        if (this.hooks) this.lose(taskId, this.hooks);
        else {
          this.onLease({ kind: 'lost', taskId });
          this.lostEarly.add(taskId);
        }
      }
      this.reached();
    } catch (error) {
      // Unreachable database: the next renewal tries again (and the leases run out meanwhile).
      this.failed(error);
    }
  }

  private lose(taskId: string, hooks: ClusterHooks): void {
    this.onLease({ kind: 'lost', taskId });
    hooks.lost(taskId);
  }

  /** A write to `taskId` failed with its outcome unknown: serve it again only after copying it from the authority. */
  markForReload(taskId: string): void {
    this.reload.add(taskId);
  }

  /** Stops the keeper, releases every lease (another Host may take the Tasks at once) and leaves. */
  async leave(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.renewTimer) clearTimeout(this.renewTimer);
    await this.watch?.close();
    await Promise.all([this.ticking, this.renewing]);
    try {
      await this.history.release();
      await this.history.leave();
    } catch {
      // Unreachable: the leases run out on their own.
    }
    await this.history.close().catch(() => undefined);
  }

  /** Copies a Task from the authority into the mirror, after what the mirror holds (all of it when they disagree). */
  private async copy(store: EventStore, taskId: string): Promise<void> {
    const after = store.head(taskId)?.revision ?? 0;
    try {
      await store.copyIn(await this.history.copyTask(taskId, after));
    } catch (error) {
      if (!(error instanceof StoreError) || error.code !== 'record_corrupt' || after === 0) throw error;
      await store.forget(taskId);
      await store.copyIn(await this.history.copyTask(taskId, 0));
    }
  }
}
