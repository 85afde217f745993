import type pg from 'pg';
import { z } from 'zod';
import type { AuthorityCommit, StoreAuthority } from '../authority.js';
import { StoreError } from '../errors.js';
import { COMMITS_CHANNEL, CommitNotifier } from './commit-notifier.js';
import type { PgLeases } from './pg-leases.js';
import { queryOrFail } from './pg-pool.js';
import { storeErrorOf } from './stored.js';

export interface PgAppendsOptions {
  pool: pg.Pool;
  /** This Host's name in event and lease rows. */
  hostId: string;
  /** How long the lease of a Task this Host creates lasts (database clock). */
  leaseMs: number;
  /** The epochs appends are fenced with; a lease found lost is dropped there. */
  leases: PgLeases;
  /** NOTIFY `ordivon_commits` with the Task ids committed (default true), once per `notifyWindowMs`. */
  notify?: boolean | undefined;
  notifyWindowMs?: number | undefined;
}

// Row schemas are built once, at load: zod compiles a schema on its first parse, and a schema built
// per append spent the Host's CPU on compiling it again each time (seen in a profile of the cluster
// benchmark).
const AppendedRow = z.object({ stored: z.string().nullable() });

/** Our own SQLSTATEs raised by `ordivon_append` (schema.ts). */
const RAISED: Record<string, 'lease_lost' | 'revision_conflict' | 'identity_conflict'> = {
  OR001: 'lease_lost',
  OR002: 'revision_conflict',
  OR003: 'identity_conflict',
};

/**
 * The appends of this Host to the shared history: the `StoreAuthority` its LMDB store mirrors.
 * Every append is one call of `ordivon_append` (one round trip, one transaction): the lease epoch
 * this Host acquired the Task with is compared there, beside the revision, so a Host that lost the
 * Task — paused past its lease, partitioned, or simply slower — writes nothing and hears
 * `lease_lost`.
 */
export class PgAppends implements StoreAuthority {
  private readonly pool: pg.Pool;
  private readonly hostId: string;
  private readonly leaseMs: number;
  private readonly lease: PgLeases;
  private readonly notifier: CommitNotifier | undefined;

  constructor(options: PgAppendsOptions) {
    const { pool } = options;
    this.pool = pool;
    this.hostId = options.hostId;
    this.leaseMs = options.leaseMs;
    this.lease = options.leases;
    if (options.notify !== false)
      this.notifier = new CommitNotifier(
        (payloads) => pool.query(`SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, [COMMITS_CHANNEL, payloads]),
        options.notifyWindowMs,
      );
  }

  /** Sends the commit notices still waiting for their window. */
  async close(): Promise<void> {
    await this.notifier?.close();
  }

  async commit(append: AuthorityCommit): Promise<{ duplicate: false } | { duplicate: true; digest: string }> {
    const { taskId, expectedRevision } = append;
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
        this.appendArguments(append, epoch),
      );
      stored = AppendedRow.parse(rows[0]).stored;
    } catch (error) {
      throw this.refusal(error, append);
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
    await queryOrFail(
      this.pool,
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

  /** `ordivon_append`'s arguments, in the order schema.ts declares them. */
  private appendArguments(append: AuthorityCommit, epoch: number): unknown[] {
    const { record, claims } = append;
    return [
      append.taskId,
      append.expectedRevision,
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
    ];
  }

  /** The StoreError for a failed `ordivon_append`; a lease found lost is dropped first. */
  private refusal(error: unknown, append: AuthorityCommit): StoreError {
    const { taskId, expectedRevision } = append;
    const details = { taskId, revision: append.revision };
    const code = RAISED[(error as { code?: string }).code ?? ''];
    if (code === 'lease_lost') this.lease.drop(taskId);
    if (code) {
      const detail = (error as { detail?: string }).detail ?? '';
      return new StoreError(
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
      return new StoreError('identity_conflict', (error as Error).message, details);
    return storeErrorOf(error, details);
  }
}
