import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  linkSync,
  statSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  fsyncSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { bootId, isLiveState, pidExists, procStat, processStartTicks } from '../os/index.js';
import { StoreError } from './errors.js';
import { FORMAT_NAME, FORMAT_VERSION, FormatFile } from './records.js';

/** Resolves the state root: explicit option, then ORDIVON_STATE, then ./.ordivon. */
export function resolveStateRoot(explicit?: string): string {
  return resolve(explicit ?? process.env.ORDIVON_STATE ?? '.ordivon');
}

/**
 * Checks `format.json`, creating it for a new root when `create` is set. A root of another
 * format or version is refused `format_unknown`; a missing root `state_missing`.
 */
export function checkFormat(root: string, create: boolean): void {
  const path = join(root, 'format.json');
  if (!existsSync(path)) {
    if (!create) throw new StoreError('state_missing', `no Ordivon state at ${root}`, { root });
    mkdirSync(root, { recursive: true });
    writeDurably(path, JSON.stringify({ format: FORMAT_NAME, version: FORMAT_VERSION }, null, 2) + '\n');
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new StoreError('format_unknown', `${path} is not JSON: ${(error as Error).message}`, { root, object: path });
  }
  const format = FormatFile.safeParse(parsed);
  if (!format.success || format.data.version !== FORMAT_VERSION) {
    throw new StoreError(
      'format_unknown',
      `${path} names ${JSON.stringify(parsed)}; this build reads ${FORMAT_NAME} v${FORMAT_VERSION}`,
      {
        root,
        object: path,
      },
    );
  }
}

function writeDurably(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  const fd = openSync(tmp, 'r');
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, path);
}

const LockFile = z.object({ pid: z.number().int(), host: z.string(), startedAt: z.string(), purpose: z.string() });
export type LockInfo = z.infer<typeof LockFile>;

/**
 * Reads the holder of the state-root lock, or null when the root is free or its holder died.
 * A lock file that cannot be read yet (its creator is between create and write) counts as held
 * for a few seconds, so two starting processes never both take over.
 */
export function lockHolder(root: string): LockInfo | null {
  return judgeLock(join(root, 'state.lock')).holder;
}

/** The lock file's text as read, and its live holder (null when free, stale or gone). */
function judgeLock(path: string): { text: string | undefined; holder: LockInfo | null } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { text: undefined, holder: null };
  }
  const parsed = LockFile.safeParse(safeJson(text));
  if (!parsed.success) {
    const stat = statSync(path, { throwIfNoEntry: false });
    const stale = !stat || Date.now() - stat.mtimeMs > 5_000;
    return { text, holder: stale ? null : { pid: -1, host: hostname(), startedAt: 'just now', purpose: 'starting' } };
  }
  return { text, holder: parsed.data.host === hostname() && !pidExists(parsed.data.pid) ? null : parsed.data };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Takes the state-root lock: one supervisor (or one writing CLI command) per state root. The lock
 * is a file created exclusively and naming its holder; a lock whose holder process is gone is
 * taken over. Read-only inspection (`doctor`, `show`) does not take it.
 *
 * Returns the release function. Fails `state_locked` naming the holder.
 */
export function acquireLock(root: string, purpose: string): () => void {
  const path = join(root, 'state.lock');
  const mine: LockInfo = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), purpose };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      try {
        writeFileSync(fd, JSON.stringify(mine));
        fsyncSync(fd);
      } catch (error) {
        // A lock without its holder's name would keep others out for a while: never leave one.
        closeSync(fd);
        unlinkQuietly(path);
        throw new StoreError('storage_failed', `cannot write ${path}: ${(error as Error).message}`, { root });
      }
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          const holder = LockFile.parse(JSON.parse(readFileSync(path, 'utf8')));
          if (holder.pid === mine.pid && holder.startedAt === mine.startedAt) unlinkSync(path);
        } catch {
          /* already gone */
        }
      };
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      // A root this process may not write (read-only mount, permissions) is refused with a documented code.
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM')
        throw new StoreError('read_only', `state root ${root} is not writable (${code}): ${(error as Error).message}`, {
          root,
        });
      if (code !== 'EEXIST')
        throw new StoreError('storage_failed', `cannot create ${path}: ${(error as Error).message}`, { root });
      const { text, holder } = judgeLock(path);
      if (holder) {
        throw new StoreError(
          'state_locked',
          `state root ${root} is held by pid ${holder.pid} (${holder.purpose}) since ${holder.startedAt}`,
          {
            root,
            holder,
          },
        );
      }
      // The holder is gone (or the file is unreadable): remove that stale lock (only one of several
      // waiters does, and never a lock another waiter took meanwhile) and try again.
      if (text !== undefined) removeStale(path, text);
    }
  }
  throw new StoreError('state_locked', `could not take the lock of ${root}`, { root }, true);
}

const GateFile = z.object({
  pid: z.number().int(),
  host: z.string(),
  startTicks: z.number().int(),
  bootId: z.string(),
});
type GateHolder = z.infer<typeof GateFile>;

/** How long a live holder may keep an environment's gate before a waiter gives up (`state_locked`). */
const GATE_PATIENCE_MS = 60_000;
/** A gate or takeover file that does not parse (it appears complete, so it was damaged) is taken over after this long. */
const GATE_UNREADABLE_MS = 5_000;

/**
 * Takes the open/close gate of the LMDB environment at `envDir`: a file `<envDir>.gate`, created
 * exclusively and naming its holder. Every process opens and closes an environment only inside it.
 *
 * Why: lmdb (3.5, robust POSIX mutexes in `lock.mdb`) lets the last process closing an environment
 * destroy the lock region's mutexes, while a process opening it at that moment, which lost the race
 * for the exclusive lock, waits for the shared lock and then uses the destroyed mutexes: every
 * transaction of that process, and of every process opening after it while it stays open, fails
 * `EINVAL`. Opens and closes never overlap while they take this gate. Readers take it too.
 *
 * Waits (synchronously, backing off up to 20 ms) while another live process holds the gate; a gate
 * this process holds already is entered again; a gate whose holder died (pid gone, or reused: its
 * start time differs; another boot) is taken over by exactly one waiter.
 * Returns the release function. Fails `state_locked` after a minute behind a live holder. Where no
 * file can be written (read-only or full file system, directory gone) it gates nothing and returns.
 */
export function enterEnvGate(envDir: string): () => void {
  const path = `${envDir}.gate`;
  const mine = selfHolder();
  const deadline = Date.now() + GATE_PATIENCE_MS;
  for (let wait = 1; ; wait = Math.min(wait * 2, 20)) {
    const created = createExclusive(path, mine);
    // Without a writable directory there is nothing to gate: lmdb then keeps no lock region for a
    // read-only open either, and a writable open fails on its own.
    if (created === 'unavailable') return () => {};
    if (created === 'created') {
      return () => {
        // Unlink only our own gate; a holder never loses its gate, so this is a plain check.
        if (sameHolder(readHolder(path), mine)) unlinkQuietly(path);
      };
    }
    const text = readText(path);
    const holder = text === undefined ? undefined : parseHolder(text);
    // lmdb-js serialises one process's opens and closes of an environment itself (one shared
    // MDB_env per file), and a thread of this process waiting for its own gate would never see it freed.
    if (sameHolder(holder, mine)) return () => {};
    if (holder !== undefined && gateAbandoned(path, holder)) removeStale(path, text!);
    else if (Date.now() > deadline) {
      throw new StoreError(
        'state_locked',
        `the open/close gate ${path} is held by ${describe(holder)} for more than ${GATE_PATIENCE_MS / 1000} s`,
        { root: envDir },
        true,
      );
    } else sleepSync(wait);
  }
}

/**
 * Creates `path` naming `holder`, atomically and complete (written aside, then hard-linked into
 * place, which fails when `path` exists): `'exists'` when another has it, `'unavailable'` when no file
 * can be written there at all (read-only or full file system, directory gone).
 */
function createExclusive(path: string, holder: GateHolder): 'created' | 'exists' | 'unavailable' {
  const aside = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(aside, JSON.stringify(holder), { flag: 'wx' });
  } catch {
    unlinkQuietly(aside);
    return 'unavailable';
  }
  try {
    linkSync(aside, path);
    return 'created';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EEXIST' ? 'exists' : 'unavailable';
  } finally {
    unlinkQuietly(aside);
  }
}

/**
 * Removes the lock or gate file at `path` if it still reads `staleText` (judged stale by the caller).
 * Only the waiter that creates `<path>.takeover` does it, and it re-reads the file first: such a file
 * is removed only by its holder or by this single taker, so what it re-read cannot be replaced
 * before it unlinks it. A taker that died leaves its marker, which the next waiter removes.
 */
function removeStale(path: string, staleText: string): void {
  const takeover = `${path}.takeover`;
  if (createExclusive(takeover, selfHolder()) !== 'created') {
    const taker = readHolder(takeover);
    if (taker !== undefined && gateAbandoned(takeover, taker)) unlinkQuietly(takeover);
    else sleepSync(1);
    return;
  }
  try {
    const again = readText(path);
    if (again === staleText) unlinkQuietly(path);
  } finally {
    unlinkQuietly(takeover);
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The holder named in a gate file, `'unreadable'` when it does not parse, undefined when it is gone. */
function readHolder(path: string): GateHolder | 'unreadable' | undefined {
  const text = readText(path);
  return text === undefined ? undefined : parseHolder(text);
}

function parseHolder(text: string): GateHolder | 'unreadable' {
  const parsed = GateFile.safeParse(safeJson(text));
  return parsed.success ? parsed.data : 'unreadable';
}

/** Whether the holder of the gate file at `path` is gone: another boot, or a pid that died or was reused. */
function gateAbandoned(path: string, holder: GateHolder | 'unreadable'): boolean {
  if (holder === 'unreadable') {
    const stat = statSync(path, { throwIfNoEntry: false });
    return stat !== undefined && Date.now() - stat.mtimeMs > GATE_UNREADABLE_MS;
  }
  if (holder.host !== hostname()) return false;
  if (holder.bootId !== bootId()) return true;
  const stat = procStat(holder.pid);
  // No stat to read: the pid decides, whatever start time was recorded.
  if (stat === undefined) return !pidExists(holder.pid);
  return !isLiveState(stat.state) || (holder.startTicks !== 0 && stat.startTicks !== holder.startTicks);
}

function selfHolder(): GateHolder {
  return {
    pid: process.pid,
    host: hostname(),
    startTicks: processStartTicks(process.pid),
    bootId: bootId(),
  };
}

function sameHolder(a: GateHolder | 'unreadable' | undefined, b: GateHolder): boolean {
  return (
    typeof a === 'object' &&
    a.pid === b.pid &&
    a.host === b.host &&
    a.startTicks === b.startTicks &&
    a.bootId === b.bootId
  );
}

function describe(holder: GateHolder | 'unreadable' | undefined): string {
  return typeof holder === 'object' ? `pid ${holder.pid} on ${holder.host}` : 'an unreadable gate file';
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));
/** Blocks this thread for `ms`: opening a store is synchronous, and the gate is held only for an open or a close. */
function sleepSync(ms: number): void {
  Atomics.wait(pause, 0, 0, ms);
}
