import type pg from 'pg';
import { z } from 'zod';
import { StoreError } from '../errors.js';
import { EventRecord, Projection } from '../records.js';
import { queryOrFail } from './pg-pool.js';
import { parseStored, storeErrorOf } from './stored.js';

/** One stored event as another Host reads it: with the Host that wrote it (`ordivon_events.host_id`). */
export interface SharedEvent {
  revision: number;
  digest: string;
  record: EventRecord;
  hostId: string;
}

/** A Task read from the shared history in one snapshot, for a Host that does not serve it. */
export interface SharedTask {
  taskId: string;
  /** Who holds its lease now (null: nobody, or it expired). */
  owner: string | null;
  events: SharedEvent[];
  projection: Projection | undefined;
  /** The objects its events wrote or named (artifact blobs are not read). */
  objects: Array<{ digest: string; bytes: Uint8Array }>;
}

const EventRow = z.object({
  task_id: z.string(),
  revision: z.coerce.number().int().positive(),
  digest: z.string(),
  record: z.string(),
  host_id: z.string(),
});
const ProjectionRow = z.object({ task_id: z.string(), record: z.string() });
const OwnerRow = z.object({ owner: z.string().nullable() });
const OwnerUrlRow = z.object({ owner: z.string().nullable(), url: z.string().nullable() });
const BytesRow = z.object({ digest: z.string(), bytes: z.instanceof(Uint8Array) });

/** The columns `eventOf` parses, for queries over `ordivon_events e`. */
export const EVENT_COLUMNS = 'e.task_id, e.revision, e.digest, e.record, e.host_id';

/** A row of EVENT_COLUMNS, parsed (`record_corrupt` when it is not a stored event). */
export function eventOf(row: unknown): SharedEvent & { taskId: string } {
  const parsed = EventRow.safeParse(row);
  if (!parsed.success) throw new StoreError('record_corrupt', 'an ordivon_events row has an unexpected shape', {});
  const { task_id: taskId, revision, digest, record, host_id: hostId } = parsed.data;
  return { taskId, revision, digest, hostId, record: parseStored(EventRecord, record, { taskId, revision }) };
}

/** A row of `ordivon_projections` (task_id, record), parsed. */
export function projectionOf(row: unknown): { taskId: string; projection: Projection } {
  const { task_id: taskId, record } = ProjectionRow.parse(row);
  return { taskId, projection: parseStored(Projection, record, { taskId, object: 'projection' }) };
}

/** A Task's events in (after, upTo], in revision order. */
export async function readEvents(pool: pg.Pool, taskId: string, after: number, upTo: number): Promise<SharedEvent[]> {
  try {
    const { rows } = await pool.query(
      `SELECT ${EVENT_COLUMNS} FROM ordivon_events e WHERE e.task_id = $1 AND e.revision > $2 AND e.revision <= $3 ORDER BY e.revision`,
      [taskId, after, upTo],
    );
    return rows.map(eventOf);
  } catch (error) {
    throw storeErrorOf(error, { taskId });
  }
}

/** Who holds a Task's lease now (null: nobody, or it expired), or undefined when there is no such Task. */
export async function readOwner(db: pg.Pool | pg.PoolClient, taskId: string): Promise<string | null | undefined> {
  const { rows } = await db.query(
    `SELECT CASE WHEN lease_until >= now() THEN lease_owner END AS owner FROM ordivon_tasks WHERE task_id = $1 AND revision > 0`,
    [taskId],
  );
  return rows.length === 0 ? undefined : OwnerRow.parse(rows[0]).owner;
}

/**
 * Who holds a Task's lease now and the URL that Host advertises (null when it published none, or
 * nobody holds the lease); undefined when there is no such Task.
 */
export async function readOwnerAndUrl(
  pool: pg.Pool,
  taskId: string,
): Promise<{ owner: string | null; url: string | null } | undefined> {
  const { rows } = await queryOrFail(
    pool,
    `SELECT CASE WHEN t.lease_until >= now() THEN t.lease_owner END AS owner,
       CASE WHEN t.lease_until >= now() THEN h.advertised_url END AS url
     FROM ordivon_tasks t LEFT JOIN ordivon_hosts h ON h.host_id = t.lease_owner
     WHERE t.task_id = $1 AND t.revision > 0`,
    [taskId],
  );
  return rows.length === 0 ? undefined : OwnerUrlRow.parse(rows[0]);
}

/** A whole Task as the shared history holds it now (one snapshot), or undefined when there is none. */
export async function readTask(pool: pg.Pool, taskId: string): Promise<SharedTask | undefined> {
  const client = await pool.connect().catch((error: unknown) => {
    throw storeErrorOf(error, { taskId });
  });
  let failed = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const owner = await readOwner(client, taskId);
    if (owner === undefined) {
      await client.query('COMMIT');
      return undefined;
    }
    const events = await client.query(
      `SELECT ${EVENT_COLUMNS} FROM ordivon_events e WHERE e.task_id = $1 ORDER BY e.revision`,
      [taskId],
    );
    const projection = await client.query(`SELECT task_id, record FROM ordivon_projections WHERE task_id = $1`, [
      taskId,
    ]);
    const objects = await client.query(
      `SELECT o.digest, o.bytes FROM ordivon_task_objects l JOIN ordivon_objects o USING (digest) WHERE l.task_id = $1`,
      [taskId],
    );
    await client.query('COMMIT');
    return {
      taskId,
      owner,
      events: events.rows.map(eventOf),
      projection: projection.rows.length === 0 ? undefined : projectionOf(projection.rows[0]).projection,
      objects: objects.rows.map((row) => BytesRow.parse(row)),
    };
  } catch (error) {
    failed = true;
    throw storeErrorOf(error, { taskId });
  } finally {
    // A failed connection is not pooled again: after a timeout it may still wait for an answer,
    // or sit inside the transaction it began (closing it ends that on the server too).
    client.release(failed);
  }
}
