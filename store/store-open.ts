import { join } from 'node:path';
import type { StoreAuthority } from './authority.js';
import { openDatabases, type StoreDatabases } from './databases.js';
import { enterEnvGate } from './env-gate.js';
import { StoreError } from './errors.js';
import { openStoreJournal, type Journal, type JournalSettings } from './journal/index.js';
import type { ObjectKinds } from './prepare-object.js';
import { makePrivateDir, protectStateRoot, sharedRootAllowedByEnv } from './private-root.js';
import { acquireLock } from './state-lock.js';
import { checkFormat } from './state-root.js';

export interface OpenOptions {
  /** State root directory (holds `format.json`, `state.lock` and the `lmdb/` environment). */
  root: string;
  kinds: ObjectKinds;
  /** Open without the lock and refuse writes: for `doctor`, `show`, `list` beside a running service. */
  readOnly?: boolean;
  /** Soft limit: passing it records a warning for the stream (default 10,000 events). */
  streamWarnAt?: number;
  /** Who holds the lock (shown to a second opener). */
  purpose?: string;
  /**
   * Where appends are decided when several Hosts share one history (store/postgres/): this store
   * then mirrors the Tasks its Host owns, written after the authority committed.
   */
  authority?: StoreAuthority;
  /**
   * The journal-first commit (docs/design.md, "The journal-first commit"), opt-in for a writable
   * store without an authority: `true` (or an object setting the journal's segment size or
   * file-system calls) makes each append durable at its group's journal flush, LMDB applied beside
   * it; off by default (LMDB's own commits still flush, so the journal has not been measured ahead
   * of LMDB alone). Either way a writable open first applies what the root's journal holds beyond
   * LMDB.
   */
  journal?: boolean | JournalSettings;
  /**
   * Open a root whose mode lets other local accounts in (group or other bits), as it is: no mode
   * in it is changed. Default `ORDIVON_ALLOW_SHARED_ROOT=1`; else such a root is refused
   * `state_root_shared` before anything is read or written, and a writable open of a private root
   * takes group and other bits off the Host's directories and files in it (`protectStateRoot`).
   */
  allowSharedRoot?: boolean | undefined;
}

/** What `EventStore.open` hands its constructor: the opened environment and the options it keeps. */
export interface OpenedStore {
  root: string;
  readOnly: boolean;
  dbs: StoreDatabases;
  kinds: ObjectKinds;
  streamWarnAt: number;
  /** Releases the state-root lock (a no-op when read-only). */
  release: () => void;
  authority: StoreAuthority | undefined;
  journal: Journal | undefined;
}

/** Checks the format, takes the lock and opens LMDB and the journal; the lock is released again when any of it fails. */
export function openStore(options: OpenOptions): OpenedStore {
  const readOnly = options.readOnly ?? false;
  const allowShared = options.allowSharedRoot ?? sharedRootAllowedByEnv();
  checkFormat(options.root, !readOnly, { allowShared });
  const release = readOnly ? () => {} : acquireLock(options.root, options.purpose ?? 'ordivon');
  try {
    if (!readOnly && !allowShared) {
      // Files made before this open by what sets no mode (the Runtime's LMDB, opened first by
      // openHost; a root written by an older build), and workspaces/ made 0700 before the
      // Runtime's recursive mkdir would make it with the umask's mode.
      protectStateRoot(options.root);
      makePrivateDir(join(options.root, 'workspaces'));
    }
    const dbs = openDatabases(options.root, readOnly);
    const { root, kinds, streamWarnAt, authority } = options;
    if (!readOnly) markMirror(root, dbs, authority !== undefined);
    const journal = readOnly || authority ? undefined : openJournal(root, dbs, options.journal);
    return { root, readOnly, dbs, kinds, streamWarnAt: streamWarnAt ?? 10_000, release, authority, journal };
  } catch (error) {
    release();
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new StoreError('state_missing', `no store at ${options.root}`, { root: options.root });
    }
    throw error;
  }
}

/** Waits for pending commits, closes LMDB and releases the state-root lock. */
export async function closeStore(opened: OpenedStore): Promise<void> {
  const env = opened.dbs.env;
  try {
    await opened.journal?.close();
    if (!opened.readOnly) await env.flushed;
    const leave = enterEnvGate(join(opened.root, 'lmdb'));
    try {
      await env.close();
    } finally {
      leave();
    }
  } finally {
    opened.release();
  }
}

/** The root's journal, its records beyond LMDB applied; LMDB is closed again when that fails. */
function openJournal(root: string, dbs: StoreDatabases, option: OpenOptions['journal']): Journal | undefined {
  try {
    return openStoreJournal(
      root,
      dbs,
      option === true ? {} : option === false || option === undefined ? undefined : option,
    ).journal;
  } catch (error) {
    const leave = enterEnvGate(join(root, 'lmdb'));
    void dbs.env.close().finally(leave);
    throw error;
  }
}

const MIRROR_KEY: [string, string] = ['mirror', 'authority'];

/**
 * A state root that mirrors a shared history is written only through its authority: written
 * directly (a CLI `send` while its Host is down), the mirror would run ahead of the database and
 * no longer be a copy of it. The first writable open with an authority marks the root; a writable
 * open without one is then refused `state_mirrored` (closing the environment again).
 */
function markMirror(root: string, dbs: StoreDatabases, withAuthority: boolean): void {
  const marked = dbs.meta.get(MIRROR_KEY) !== undefined;
  if (withAuthority && !marked) dbs.meta.putSync(MIRROR_KEY, true);
  if (withAuthority || !marked) return;
  const leave = enterEnvGate(join(root, 'lmdb'));
  void dbs.env.close().finally(leave);
  throw new StoreError(
    'state_mirrored',
    `the state root ${root} mirrors a Host's Tasks in a shared PostgreSQL history: write through that Host (ordivon serve --store …)`,
    { root },
  );
}
