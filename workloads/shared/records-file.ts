import Database from 'better-sqlite3';
import type { z } from 'zod';

// better-sqlite3 ships no types; its declaration is bench/better-sqlite3.d.ts (same compilation).

/**
 * Opens (creating if needed) a world's SQLite records file for writing, with `schema` applied:
 * WAL with `synchronous = FULL`, so a commit is synced to the log before it returns and a reader
 * in another process sees it.
 */
export function openRecordsFile(file: string, schema: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(schema);
  return db;
}

/** Each row parsed by `row` (a row that does not parse throws: it is not one this world wrote). */
export function rowsOf<S extends z.ZodType>(rows: unknown[], row: S): z.output<S>[] {
  return rows.map((one) => row.parse(one));
}

/**
 * The rows `select` reads from a records file through a read-only connection, each parsed by
 * `row`: the ground truth a test or a demo counts from, whatever the server answered. Safe while
 * the server runs (WAL lets a reader in another process see every committed row) and after it was
 * killed (committed frames still in the WAL are read). Throws if the file does not exist or a row
 * does not parse.
 */
export function readRecordsFile<S extends z.ZodType>(file: string, select: string, row: S): z.output<S>[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return rowsOf(db.prepare(select).all(), row);
  } finally {
    db.close();
  }
}
