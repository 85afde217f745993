import { openRecordsFile, readRecordsFile, rowsOf } from '../../shared/records-file.js';
import { digestOf } from '../../../store/index.js';
import { EntryRow, type LedgerEntry, type PerformRequest } from './ledger-schema.js';

/**
 * The schema. `request_id` is deliberately not unique: the ledger is a non-idempotent backend, and
 * a second perform under the same id appends a second entry (the duplicate the Host must avoid).
 * The triggers make "append-only" a property of the file, not of this code.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS entries (
  seq INTEGER PRIMARY KEY,
  request_id TEXT NOT NULL,
  operation TEXT,
  target TEXT,
  input_digest TEXT,
  committed_at TEXT
);
CREATE INDEX IF NOT EXISTS entries_request_id ON entries (request_id);
CREATE TRIGGER IF NOT EXISTS entries_no_update BEFORE UPDATE ON entries
  BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
  BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
`;

const COLUMNS = 'seq, request_id, operation, target, input_digest, committed_at';

/** The server's handle on its ledger file: the only writer. */
export interface LedgerDb {
  /**
   * Appends one entry and returns it. Durable on return: WAL with `synchronous = FULL` syncs the
   * log before the commit returns, so a process killed right after still has the entry on reopen.
   * Throws (nothing appended) if the database refuses the write.
   */
  append(request: PerformRequest): LedgerEntry;
  /** Every entry under `requestId`, in commit order (none, one, or more). */
  lookup(requestId: string): LedgerEntry[];
  /** Every entry, in commit order. */
  entries(): LedgerEntry[];
  close(): void;
}

/** Opens (creating if needed) the ledger file for writing: WAL, `synchronous = FULL`. */
export function openLedgerDb(file: string): LedgerDb {
  const db = openRecordsFile(file, SCHEMA);
  const insert = db.prepare(
    'INSERT INTO entries (request_id, operation, target, input_digest, committed_at) VALUES (?, ?, ?, ?, ?)',
  );
  const byId = db.prepare(`SELECT ${COLUMNS} FROM entries WHERE request_id = ? ORDER BY seq`);
  const all = db.prepare(`SELECT ${COLUMNS} FROM entries ORDER BY seq`);
  return {
    append(request) {
      const committedAt = new Date().toISOString();
      const inputDigest = digestOf(request.input);
      const { lastInsertRowid } = insert.run(
        request.requestId,
        request.operation,
        request.target,
        inputDigest,
        committedAt,
      );
      return {
        seq: Number(lastInsertRowid),
        requestId: request.requestId,
        operation: request.operation,
        target: request.target,
        inputDigest,
        committedAt,
      };
    },
    lookup: (requestId) => rowsOf(byId.all(requestId), EntryRow),
    entries: () => rowsOf(all.all(), EntryRow),
    close: () => void db.close(),
  };
}

/** The entries of a ledger file, read from the file itself (`readRecordsFile`: safe while the server runs or after it was killed). */
export function readLedgerFile(file: string): LedgerEntry[] {
  return readRecordsFile(file, `SELECT ${COLUMNS} FROM entries ORDER BY seq`, EntryRow);
}
