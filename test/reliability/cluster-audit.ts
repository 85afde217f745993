import type pg from 'pg';
import { z } from 'zod';
import { EventRecord, digestOf } from '../../store/index.js';
import type { WriterLog } from './host-process.js';

/** What the shared history says after the faults (cluster-torture.ts). */
export interface HistoryAudit {
  /** Acknowledged (Task, revision, event id) absent from ordivon_events or stored with another event. */
  lost: string[];
  /** Tasks with more than one admitted outcome (an admitted `task.cancel`, or a passed `verification.record`). */
  doubleOutcomes: string[];
  /**
   * Events written outside a lease: an epoch lower than an earlier revision's, an epoch whose
   * acquisition the lease log does not give to the event's Host, a revision past the head at which
   * a later epoch was acquired (ordivon_lease_log.revision), or an append its Host heard refused
   * `lease_lost` that is stored after all.
   */
  fencedAccepted: string[];
  /** Hash chain, revision sequence and head mismatches. */
  chain: string[];
  tasks: number;
  events: number;
}

const TaskRow = z.object({
  task_id: z.string(),
  revision: z.coerce.number().int(),
  digest: z.string().nullable(),
});
const EventRow = z.object({
  task_id: z.string(),
  revision: z.coerce.number().int(),
  event_id: z.string(),
  digest: z.string(),
  record: z.string(),
  host_id: z.string(),
  lease_epoch: z.coerce.number().int(),
});
const LeaseRow = z.object({
  task_id: z.string(),
  lease_epoch: z.coerce.number().int(),
  host_id: z.string(),
  revision: z.coerce.number().int(),
});
type LeaseRow = z.infer<typeof LeaseRow>;
const LeaseHeld = z.object({ task_id: z.string(), lease_epoch: z.coerce.number().int() });
const Count = z.object({ n: z.coerce.number().int() });

type StoredEvent = z.infer<typeof EventRow> & { parsed: EventRecord | undefined };

/**
 * The Tasks, events and lease log as of one snapshot: a killed Host's last append may still commit
 * on the server after the process is gone, and must not land between two of these reads.
 */
async function readHistory(db: pg.Pool) {
  const client = await db.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const tasks = (await client.query('SELECT task_id, revision, digest FROM ordivon_tasks')).rows.map((r) =>
      TaskRow.parse(r),
    );
    const rows = (
      await client.query(
        'SELECT task_id, revision, event_id, digest, record, host_id, lease_epoch FROM ordivon_events ORDER BY task_id, revision',
      )
    ).rows.map((r) => EventRow.parse(r));
    const leases = new Map<string, LeaseRow[]>();
    const logged = await client.query(
      'SELECT task_id, lease_epoch, host_id, revision FROM ordivon_lease_log ORDER BY task_id, lease_epoch',
    );
    for (const row of logged.rows.map((r) => LeaseRow.parse(r)))
      leases.set(row.task_id, [...(leases.get(row.task_id) ?? []), row]);
    await client.query('COMMIT');
    return { tasks, rows, leases };
  } finally {
    client.release();
  }
}

/** Reads the whole history once and checks it against what the Hosts acknowledged and were refused. */
export async function auditHistory(db: pg.Pool, log: WriterLog): Promise<HistoryAudit> {
  const { tasks, rows, leases } = await readHistory(db);
  const streams = new Map<string, StoredEvent[]>();
  for (const row of rows) {
    const parsed = EventRecord.safeParse(JSON.parse(row.record));
    const stream = streams.get(row.task_id) ?? [];
    stream.push({ ...row, parsed: parsed.success ? parsed.data : undefined });
    streams.set(row.task_id, stream);
  }

  const audit: HistoryAudit = {
    lost: [],
    doubleOutcomes: [],
    fencedAccepted: [],
    chain: [],
    tasks: tasks.length,
    events: rows.length,
  };
  for (const task of tasks) checkStream(task, streams.get(task.task_id) ?? [], leases.get(task.task_id) ?? [], audit);

  const byId = new Map(rows.map((r) => [`${r.task_id} ${r.event_id}`, r]));
  for (const ack of log.acks) {
    const stored = streams.get(ack.taskId)?.[ack.revision - 1];
    const same =
      ack.eventId === 'task.created' ? stored?.parsed?.type === 'task.created' : stored?.event_id === ack.eventId;
    if (!same)
      audit.lost.push(
        `${ack.taskId} r${ack.revision} ${ack.eventId} (acknowledged by ${ack.hostId}; stored: ${stored?.event_id ?? 'nothing'})`,
      );
  }
  for (const refusal of log.refusals) {
    const stored = byId.get(`${refusal.taskId} ${refusal.eventId}`);
    if (stored)
      audit.fencedAccepted.push(
        `${refusal.taskId} ${refusal.eventId}: refused lease_lost to ${refusal.hostId}, yet stored at r${stored.revision}`,
      );
  }
  return audit;
}

function checkStream(
  task: z.infer<typeof TaskRow>,
  stream: StoredEvent[],
  leases: LeaseRow[],
  audit: HistoryAudit,
): void {
  const acquired = new Map(leases.map((l) => [l.lease_epoch, l]));
  // For each epoch, the lowest head at which a later epoch was acquired: no write of it may pass that.
  const fence = new Map<number, number>();
  let lowest = Infinity;
  for (const lease of [...leases].reverse()) {
    fence.set(lease.lease_epoch, lowest);
    lowest = Math.min(lowest, lease.revision);
  }
  let outcomes = 0;
  let epoch = 0;
  let prev: string | null = null;
  for (const [index, event] of stream.entries()) {
    const at = `${task.task_id} r${event.revision}`;
    if (event.revision !== index + 1) audit.chain.push(`${at}: found where r${index + 1} was expected`);
    const record = event.parsed;
    if (!record) {
      audit.chain.push(`${at}: the record does not parse`);
      continue;
    }
    if (digestOf(record) !== event.digest) audit.chain.push(`${at}: the digest column is not the record's digest`);
    if (record.prev !== prev) audit.chain.push(`${at}: prev ${record.prev} is not r${index}'s digest ${prev}`);
    if (record.id !== event.event_id) audit.chain.push(`${at}: event_id ${event.event_id}, record id ${record.id}`);
    prev = event.digest;

    if (event.lease_epoch < epoch)
      audit.fencedAccepted.push(`${at}: written at epoch ${event.lease_epoch} after epoch ${epoch}`);
    epoch = Math.max(epoch, event.lease_epoch);
    const holder = acquired.get(event.lease_epoch)?.host_id;
    if (holder !== event.host_id)
      audit.fencedAccepted.push(
        `${at}: written by ${event.host_id} at epoch ${event.lease_epoch}, acquired by ${holder ?? 'nobody'}`,
      );
    const limit = fence.get(event.lease_epoch) ?? Infinity;
    if (event.revision > limit)
      audit.fencedAccepted.push(
        `${at}: written at epoch ${event.lease_epoch} after a later epoch was acquired at r${limit}`,
      );

    if (isOutcome(record)) outcomes++;
  }
  if (outcomes > 1) audit.doubleOutcomes.push(`${task.task_id}: ${outcomes} admitted outcomes`);
  const last = stream.at(-1);
  if ((last?.revision ?? 0) !== task.revision || (last?.digest ?? null) !== task.digest)
    audit.chain.push(
      `${task.task_id}: head r${task.revision} ${task.digest}, last event r${last?.revision ?? 0} ${last?.digest ?? null}`,
    );
}

/** An event whose admission ends the Task (machines/task-machine.ts: `cancelled` and `completed` are final). */
function isOutcome(record: EventRecord): boolean {
  if (!record.disposition.admitted) return false;
  return record.type === 'task.cancel' || (record.type === 'verification.record' && record.data.passed === true);
}

/** The Tasks whose unexpired lease `hostId` holds now (database clock), with their epochs. */
export async function leasesOf(db: pg.Pool, hostId: string): Promise<Array<{ taskId: string; epoch: number }>> {
  const { rows } = await db.query(
    'SELECT task_id, lease_epoch FROM ordivon_tasks WHERE lease_owner = $1 AND lease_until > now() AND revision > 0',
    [hostId],
  );
  return rows.map((r) => LeaseHeld.parse(r)).map((r) => ({ taskId: r.task_id, epoch: r.lease_epoch }));
}

/**
 * How many of `held` were acquired again after the epoch listed (ordivon_lease_log), by a Host
 * other than `except` (by any Host, the same id included, when `except` is undefined).
 */
export async function takenOver(
  db: pg.Pool,
  held: Array<{ taskId: string; epoch: number }>,
  except: string | undefined,
): Promise<number> {
  const { rows } = await db.query(
    `SELECT count(DISTINCT l.task_id) AS n FROM ordivon_lease_log l
     JOIN unnest($1::text[], $2::bigint[]) AS h(task_id, epoch) ON l.task_id = h.task_id AND l.lease_epoch > h.epoch
     WHERE $3::text IS NULL OR l.host_id <> $3`,
    [held.map((h) => h.taskId), held.map((h) => h.epoch), except ?? null],
  );
  return Count.parse(rows[0]).n;
}

/** Every Task and who holds its lease now: null when the lease is free or expired (database clock). */
export async function owners(db: pg.Pool): Promise<Map<string, string | null>> {
  const { rows } = await db.query(
    'SELECT task_id, CASE WHEN lease_until > now() THEN lease_owner END AS owner FROM ordivon_tasks WHERE revision > 0',
  );
  const Row = z.object({ task_id: z.string(), owner: z.string().nullable() });
  return new Map(rows.map((r) => Row.parse(r)).map((r) => [r.task_id, r.owner]));
}
