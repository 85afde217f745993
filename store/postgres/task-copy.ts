import type pg from 'pg';
import { z } from 'zod';
import type { TaskCopyIn } from '../event-store.js';
import { EventRecord, IndexKind, Projection } from '../records.js';
import { withClient } from './pg-pool.js';
import { parseStored, storeErrorOf } from './stored.js';

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

/**
 * A Task's events after revision `after`, its projection, claims and the objects it wrote or
 * named, read in one snapshot so that they agree with each other; `storage_failed` when the
 * database fails.
 */
export async function copyTask(pool: pg.Pool, taskId: string, after = 0): Promise<TaskCopy> {
  try {
    return await withClient(pool, (client) => readCopy(client, taskId, after));
  } catch (error) {
    throw storeErrorOf(error, { taskId });
  }
}

async function readCopy(client: pg.PoolClient, taskId: string, after: number): Promise<TaskCopy> {
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
        : parseStored(Projection, ProjectionRow.parse(projection.rows[0]).record, { ...details, object: 'projection' }),
    objects: objects.rows.map((row) => BytesRow.parse(row)),
    blobs: blobs.rows.map((row) => BytesRow.parse(row)),
    claims: claims.rows.map((row) => {
      const { kind, key, revision, digest } = ClaimRow.parse(row);
      return { kind, key, entry: digest === null ? { revision } : { revision, digest } };
    }),
  };
}
