import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';
import { bootId, isLiveState, pidExists, procStat, processStartTicks } from '../os/identity.js';
import { PRIVATE_FILE_MODE } from './private-root.js';

/**
 * Files created exclusively that name the process holding them (the LMDB open/close gate, and the
 * takeover marker that lets exactly one waiter remove a stale lock or gate), and how a holder is
 * judged gone.
 */

const HolderFile = z.object({
  pid: z.number().int(),
  host: z.string(),
  startTicks: z.number().int(),
  bootId: z.string(),
});
export type FileHolder = z.infer<typeof HolderFile>;

/** A gate or takeover file that does not parse (it appears complete, so it was damaged) is taken over after this long. */
const UNREADABLE_MS = 5_000;

/**
 * Creates `path` naming `holder`, atomically and complete (written aside, then hard-linked into
 * place, which fails when `path` exists): `'exists'` when another has it, `'unavailable'` when no file
 * can be written there at all (read-only or full file system, directory gone).
 */
export function createExclusive(path: string, holder: FileHolder): 'created' | 'exists' | 'unavailable' {
  const aside = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(aside, JSON.stringify(holder), { flag: 'wx', mode: PRIVATE_FILE_MODE });
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
export function removeStale(path: string, staleText: string): void {
  const takeover = `${path}.takeover`;
  if (createExclusive(takeover, selfHolder()) !== 'created') {
    const taker = readHolder(takeover);
    if (taker !== undefined && holderGone(takeover, taker)) unlinkQuietly(takeover);
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

export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The holder named in a holder file, `'unreadable'` when it does not parse, undefined when it is gone. */
export function readHolder(path: string): FileHolder | 'unreadable' | undefined {
  const text = readText(path);
  return text === undefined ? undefined : parseHolder(text);
}

export function parseHolder(text: string): FileHolder | 'unreadable' {
  const parsed = HolderFile.safeParse(safeJson(text));
  return parsed.success ? parsed.data : 'unreadable';
}

/** Whether the holder of the file at `path` is gone: another boot, or a pid that died or was reused. */
export function holderGone(path: string, holder: FileHolder | 'unreadable'): boolean {
  if (holder === 'unreadable') {
    const stat = statSync(path, { throwIfNoEntry: false });
    return stat !== undefined && Date.now() - stat.mtimeMs > UNREADABLE_MS;
  }
  if (holder.host !== hostname()) return false;
  if (holder.bootId !== bootId()) return true;
  const stat = procStat(holder.pid);
  // No stat to read: the pid decides, whatever start time was recorded.
  if (stat === undefined) return !pidExists(holder.pid);
  return !isLiveState(stat.state) || (holder.startTicks !== 0 && stat.startTicks !== holder.startTicks);
}

/** This process as a holder file names it. */
export function selfHolder(): FileHolder {
  return {
    pid: process.pid,
    host: hostname(),
    startTicks: processStartTicks(process.pid),
    bootId: bootId(),
  };
}

export function sameHolder(a: FileHolder | 'unreadable' | undefined, b: FileHolder): boolean {
  return (
    typeof a === 'object' &&
    a.pid === b.pid &&
    a.host === b.host &&
    a.startTicks === b.startTicks &&
    a.bootId === b.bootId
  );
}

export function describeHolder(holder: FileHolder | 'unreadable' | undefined): string {
  return typeof holder === 'object' ? `pid ${holder.pid} on ${holder.host}` : 'an unreadable gate file';
}

export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));
/** Blocks this thread for `ms`: opening a store is synchronous, and the gate is held only for an open or a close. */
export function sleepSync(ms: number): void {
  Atomics.wait(pause, 0, 0, ms);
}
