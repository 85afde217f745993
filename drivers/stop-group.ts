import { readdirSync, readFileSync } from 'node:fs';
import { groupAlive, signalGroup } from './process-group.js';

/**
 * Pids of the members of process group `pgid` that are still running (zombies excluded), read
 * from /proc. `undefined` where /proc cannot be read (then only `groupAlive` is available).
 *
 * Why not `kill(-pgid, 0)` alone: it also succeeds for zombies, and an init that does not reap
 * orphans (as in some containers, this machine included) keeps killed grandchildren as zombies.
 */
export function livingGroupMembers(pgid: number): number[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const living: number[] = [];
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue; // exited while we scanned
    }
    // Fields after the parenthesised command name: state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') living.push(Number(entry));
  }
  return living;
}

/** True while a member of the group is running; zombies do not count where /proc is readable. */
export function groupRunning(pgid: number): boolean {
  if (!groupAlive(pgid)) return false;
  const living = livingGroupMembers(pgid);
  return living === undefined ? true : living.length > 0;
}

/** How a group was brought down: it was already gone, it went on SIGTERM, or it needed SIGKILL. */
export type GroupStop = 'gone' | 'terminated' | 'killed';

/**
 * Stops a process group politely: SIGTERM to every member, then waits up to `graceMs` for
 * `settled` (typically: the leader exited and its pipes closed), then SIGKILLs whatever still
 * runs. Never throws for a group that is already gone; resolves once the SIGKILL (if any) is sent.
 */
export async function stopGroup(pgid: number, graceMs: number, settled: Promise<unknown>): Promise<GroupStop> {
  if (!signalGroup(pgid, 'SIGTERM')) return 'gone';
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    settled.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (!groupRunning(pgid)) return 'terminated';
  signalGroup(pgid, 'SIGKILL');
  await waitUntilStopped([pgid]);
  return 'killed';
}

/**
 * Waits (polling /proc every few ms, at most `maxMs`) until none of `pids` — group leaders or
 * single processes — runs any more. `kill()` returns before a SIGKILLed process is torn down;
 * this makes "the tree is dead" hold when a run's result is delivered. Returns false on timeout.
 */
export async function waitUntilStopped(pids: readonly number[], maxMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    if (pids.every((pid) => !groupRunning(pid) && !processRunning(pid))) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** True while `pid` runs (a zombie does not); falls back to `kill(pid, 0)` without /proc. */
export function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * SIGKILLs what is left of children a dead or finished driver started: the whole group for a
 * group leader, else the single process if its exit was never observed (a pid whose exit was seen
 * may have been reused). Returns the pids that were signalled.
 */
export function killLeftovers(children: Iterable<{ pid: number; exited: boolean }>): number[] {
  const killed: number[] = [];
  for (const { pid, exited } of children) {
    if (groupRunning(pid)) {
      if (signalGroup(pid, 'SIGKILL')) killed.push(pid);
    } else if (!exited && processRunning(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      } catch {
        // gone between the check and the signal
      }
    }
  }
  return killed;
}
