import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { join } from 'node:path';
import { checkPagesBeforeOpen } from './page-check.js';
import { enterEnvGate } from './env-gate.js';
import { PRIVATE_FILE_MODE, makePrivateDir } from './private-root.js';

/** Where lmdb-js keeps the events database's shared msgpack structures (inside that database). */
export const EVENT_STRUCTURES = Symbol.for('structures');

/** The LMDB environment of a state root and its named databases, as `EventStore` reads and writes them. */
export interface StoreDatabases {
  env: RootDatabase;
  objects: Database<Buffer, string>;
  /** The same database read as msgpack: objects of roots written before the canonical-bytes layout. */
  legacyObjects: Database<unknown, string>;
  blobs: Database<Buffer, string>;
  events: Database<unknown, [string, number]>;
  heads: Database<unknown, string>;
  projections: Database<unknown, string>;
  indexes: Database<unknown, [string, string, string]>;
  meta: Database<unknown, [string, string]>;
}

/**
 * Opens the LMDB environment under `root/lmdb` and its databases. Fails `storage_corrupt` when a
 * page of the data file is damaged and `storage_failed` when the file is truncated, both before
 * LMDB maps it (`checkPagesBeforeOpen`); throws lmdb's own error (ENOENT for a missing directory)
 * otherwise.
 */
export function openDatabases(root: string, readOnly: boolean): StoreDatabases {
  // lmdb-js would make the directory with the umask's mode; the files get `permissionsMode`
  // (lmdb-js passes it to mdb_env_open, default 0664, not in its types).
  if (!readOnly) makePrivateDir(join(root, 'lmdb'));
  checkPagesBeforeOpen(root, readOnly);
  // Opens and closes of one LMDB environment must not overlap across processes (env-gate.ts).
  const leave = enterEnvGate(join(root, 'lmdb'));
  let env: RootDatabase;
  try {
    // separateFlushed: each write's promise carries `.flushed`, the flush of the commit that write
    // is in, so an append is acknowledged at its own flush (env.flushed may be a later batch's).
    const options = { path: join(root, 'lmdb'), maxDbs: 16, readOnly, separateFlushed: true };
    env = open({ ...options, permissionsMode: PRIVATE_FILE_MODE } as typeof options);
  } finally {
    leave();
  }
  const db = <V, K extends Key>(name: string, extra: object = {}) => env.openDB<V, K>(name, { ...extra });
  // Projections (one ~1 kB write per transition) as plain msgpack maps, without record
  // structures: lmdb's default (record definitions inside each value) costs ~25% more to
  // encode and ~40% more to decode for them. Values written either way read back the same
  // here; a raw reader needs `useRecords: false` too (a default one gets Maps).
  const plain = { useRecords: false };
  return {
    env,
    // Objects as their canonical JSON bytes (object-bytes.ts); older roots' msgpack objects
    // are read through a second handle on the same database.
    objects: db('objects', { encoding: 'binary' }),
    legacyObjects: db('objects', plain),
    blobs: db('blobs', { encoding: 'binary' }),
    // Shared msgpack structures: values ~45% smaller and decoding ~2.7x faster on full scans.
    events: db('events', { sharedStructuresKey: EVENT_STRUCTURES }),
    heads: db('heads'),
    projections: db('projections', plain),
    indexes: db('indexes'),
    meta: db('meta'),
  };
}

/**
 * A stored value's bytes on lmdb's reusable read buffer (`getBinaryFast`), valid only until the
 * next read on this thread: use them at once, never keep them. That buffer is larger than the
 * value; lmdb sets its `length` property (not its byte length) to the value's size, so the view
 * is cut to `length` — hashing the buffer itself would hash the whole buffer.
 */
export function borrowBytes(db: Database<Buffer, string>, key: string): Uint8Array | undefined {
  const bytes = db.getBinaryFast(key);
  return bytes === undefined ? undefined : bytes.subarray(0, bytes.length);
}
