import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { openRecordsFile, readRecordsFile, rowsOf } from '../../shared/records-file.js';
import { z } from 'zod';
import { PerformRow, type Operation, type ProviderRecord, type Target } from './provider-schema.js';

/** The records file in a provider's directory. */
export const RECORDS_FILE = 'provider.db';

/**
 * `performs` is append-only (the triggers make it a property of the file): one row per time an
 * operation was actually performed, which is what every count is read from. `idempotency` maps a
 * key to the perform it first produced and the answer to replay; a key whose window passed is
 * taken over by the next perform under it (so that perform is a second one, as at a real provider).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS performs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  operation TEXT NOT NULL,
  reference TEXT NOT NULL,
  idempotency_key TEXT,
  target TEXT NOT NULL,
  target_version TEXT NOT NULL,
  input_digest TEXT NOT NULL,
  body_digest TEXT NOT NULL,
  performed_at INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS performs_no_update BEFORE UPDATE ON performs
  BEGIN SELECT RAISE(ABORT, 'performs is append-only'); END;
CREATE TRIGGER IF NOT EXISTS performs_no_delete BEFORE DELETE ON performs
  BEGIN SELECT RAISE(ABORT, 'performs is append-only'); END;
CREATE TABLE IF NOT EXISTS idempotency (
  key TEXT PRIMARY KEY,
  body_digest TEXT NOT NULL,
  seq INTEGER NOT NULL,
  status INTEGER NOT NULL,
  response TEXT NOT NULL,
  stored_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS targets (name TEXT PRIMARY KEY, content TEXT NOT NULL, version TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clock (one INTEGER PRIMARY KEY CHECK (one = 1), offset_ms INTEGER NOT NULL);
`;

const COLUMNS =
  'seq, id, operation, reference, idempotency_key, target, target_version, input_digest, body_digest, performed_at';

const PREFIX: Record<Operation, string> = { orders: 'ord', transfers: 'tr', messages: 'msg' };

/** `sha256:<hex>` of a string (the provider's own digests: target versions, body digests, identities). */
export function sha256Of(text: string): string {
  return 'sha256:' + createHash('sha256').update(text).digest('hex');
}

const IdempotencyRow = z.strictObject({
  key: z.string(),
  body_digest: z.string(),
  seq: z.number().int(),
  status: z.number().int(),
  response: z.string(),
  stored_at: z.number().int(),
});
export type IdempotencyRow = z.infer<typeof IdempotencyRow>;

const TargetRow = z.strictObject({ name: z.string(), content: z.string(), version: z.string() });
const ClockRow = z.strictObject({ offset_ms: z.number().int() });

/** What one perform writes: its row, and for a keyed one the answer to replay. */
export interface PerformWrite {
  operation: Operation;
  reference: string;
  idempotencyKey: string | undefined;
  target: string;
  targetVersion: string;
  inputDigest: string;
  bodyDigest: string;
  now: number;
  /** The answer for the record (status and body), stored with the key to replay. */
  answer: (record: ProviderRecord) => { status: number; body: unknown };
}

/** The server's handle on its records file: the only writer. */
export interface ProviderDb {
  /**
   * Commits one perform (and its key) in one transaction and returns the record with its answer.
   * Durable on return: WAL with `synchronous = FULL` syncs before the commit returns.
   */
  perform(write: PerformWrite): { record: ProviderRecord; status: number; body: unknown };
  idempotency(key: string): IdempotencyRow | undefined;
  byId(id: string): ProviderRecord | undefined;
  bySeq(seq: number): ProviderRecord | undefined;
  records(): ProviderRecord[];
  target(name: string): Target | undefined;
  putTarget(name: string, content: unknown): Target;
  /** The provider's clock offset from the machine's (persisted: time that passed stays passed). */
  clockOffset(): number;
  setClockOffset(ms: number): void;
  close(): void;
}

function targetOf(row: unknown): Target {
  const { name, content, version } = TargetRow.parse(row);
  return { name, version, content: JSON.parse(content) as Target['content'] };
}

/** Opens (creating if needed) the records file for writing: WAL, `synchronous = FULL`. */
export function openProviderDb(file: string): ProviderDb {
  const db = openRecordsFile(file, SCHEMA);
  const insert = db.prepare(
    `INSERT INTO performs (${COLUMNS.replace('seq, ', '')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const nextSeq = db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM performs').pluck();
  const keep = db.prepare(
    'INSERT OR REPLACE INTO idempotency (key, body_digest, seq, status, response, stored_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const byKey = db.prepare('SELECT key, body_digest, seq, status, response, stored_at FROM idempotency WHERE key = ?');
  const byId = db.prepare(`SELECT ${COLUMNS} FROM performs WHERE id = ?`);
  const bySeq = db.prepare(`SELECT ${COLUMNS} FROM performs WHERE seq = ?`);
  const all = db.prepare(`SELECT ${COLUMNS} FROM performs ORDER BY seq`);
  const getTarget = db.prepare('SELECT name, content, version FROM targets WHERE name = ?');
  const setTarget = db.prepare('INSERT OR REPLACE INTO targets (name, content, version) VALUES (?, ?, ?)');
  const getClock = db.prepare('SELECT offset_ms FROM clock WHERE one = 1');
  const setClock = db.prepare('INSERT OR REPLACE INTO clock (one, offset_ms) VALUES (1, ?)');

  const perform = db.transaction((write: PerformWrite) => {
    const seq = Number(nextSeq.get());
    const id = `${PREFIX[write.operation]}_${seq}`;
    insert.run(
      id,
      write.operation,
      write.reference,
      write.idempotencyKey ?? null,
      write.target,
      write.targetVersion,
      write.inputDigest,
      write.bodyDigest,
      write.now,
    );
    const record = PerformRow.parse(bySeq.get(seq));
    const answer = write.answer(record);
    if (write.idempotencyKey !== undefined)
      keep.run(write.idempotencyKey, write.bodyDigest, seq, answer.status, JSON.stringify(answer.body), write.now);
    return { record, ...answer };
  });

  return {
    perform: (write) => perform(write),
    idempotency(key) {
      const row = byKey.get(key);
      return row === undefined ? undefined : IdempotencyRow.parse(row);
    },
    byId(id) {
      const row = byId.get(id);
      return row === undefined ? undefined : PerformRow.parse(row);
    },
    bySeq(seq) {
      const row = bySeq.get(seq);
      return row === undefined ? undefined : PerformRow.parse(row);
    },
    records: () => rowsOf(all.all(), PerformRow),
    target(name) {
      const row = getTarget.get(name);
      return row === undefined ? undefined : targetOf(row);
    },
    putTarget(name, content) {
      const text = JSON.stringify(content);
      const version = sha256Of(text);
      setTarget.run(name, text, version);
      return { name, version, content: JSON.parse(text) as Target['content'] };
    },
    clockOffset() {
      const row = getClock.get();
      return row === undefined ? 0 : ClockRow.parse(row).offset_ms;
    },
    setClockOffset: (ms) => void setClock.run(ms),
    close: () => void db.close(),
  };
}

/** Every perform in a provider's directory, read from its records file (`readRecordsFile`: whatever the server answered). */
export function readProviderRecords(dir: string): ProviderRecord[] {
  return readRecordsFile(join(dir, RECORDS_FILE), `SELECT ${COLUMNS} FROM performs ORDER BY seq`, PerformRow);
}

/** How many times each operation was performed per reference: `{orders: {"ord-ref": 2}, …}`. */
export function performCounts(records: readonly ProviderRecord[]): Record<Operation, Record<string, number>> {
  const counts: Record<Operation, Record<string, number>> = { orders: {}, transfers: {}, messages: {} };
  for (const { operation, reference } of records)
    counts[operation][reference] = (counts[operation][reference] ?? 0) + 1;
  return counts;
}
