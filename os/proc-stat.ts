import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The fields of `/proc/<pid>/stat` Ordivon reads. Linux-specific: where there is no `/proc`, every
 * reader here says so (`undefined`, or `'unreadable'`) and its callers degrade to `kill(pid, 0)`.
 */
export interface ProcStat {
  /** The state letter: `R`, `S`, `D`, `T`, … `Z` for a zombie, `X` for a dead process. */
  state: string;
  ppid: number;
  /** The process group id. */
  pgrp: number;
  /**
   * Start time in clock ticks since boot (field 22): it tells a process from a later one that
   * reused its pid.
   */
  startTicks: number;
  /** CPU time used so far, user plus system (fields 14 and 15), in clock ticks (`clockTicks()` per second). */
  cpuTicks: number;
}

/**
 * Parses the text of a `/proc/<pid>/stat` file; undefined when it is not one. The one parser of
 * that file in Ordivon.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  // The command name (field 2) may contain spaces and parentheses; fields resume after the last ')'.
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  // Fields after the command name: state(0) ppid(1) pgrp(2) … utime(11) stime(12) … starttime(19).
  const fields = text.slice(close + 2).split(' ');
  const state = fields[0];
  const startTicks = Number(fields[19]);
  if (state === undefined || state === '' || fields.length < 20) return undefined;
  return {
    state,
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    startTicks: Number.isFinite(startTicks) ? startTicks : 0,
    cpuTicks: Number(fields[11]) + Number(fields[12]),
  };
}

/**
 * Reads and parses `/proc/<pid>/stat`: `'gone'` when there is no such entry (ENOENT), `'unreadable'`
 * when it exists but cannot be read (no permission) or does not parse.
 */
export function readProcStat(pid: number): ProcStat | 'gone' | 'unreadable' {
  let text: string;
  try {
    // latin1: the command name is bytes, and every byte stays one character, ')' included.
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : 'unreadable';
  }
  return parseProcStat(text) ?? 'unreadable';
}

/** `/proc/<pid>/stat` parsed, or undefined when the pid is gone (or there is no `/proc`). */
export function procStat(pid: number): ProcStat | undefined {
  const stat = readProcStat(pid);
  return typeof stat === 'object' ? stat : undefined;
}

/** Start time of `pid` in clock ticks since boot, or 0 when it cannot be read (no `/proc`, or the process is gone). */
export function processStartTicks(pid: number): number {
  return procStat(pid)?.startTicks ?? 0;
}

/** True for the state letter of a process that still runs something: not a zombie, not dead. */
export function isLiveState(state: string): boolean {
  return state !== 'Z' && state !== 'X';
}

/** Every pid in the process table, or undefined where `/proc` cannot be listed. */
export function listPids(): number[] | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const pids: number[] = [];
  for (const name of names) {
    const code = name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0) pids.push(pid);
  }
  return pids;
}

let cachedBootId: string | undefined;

/**
 * This boot's id (`/proc/sys/kernel/random/boot_id`), `'unknown'` where it cannot be read. A reboot
 * changes it, so a recorded (boot id, pid, start time) never names a process of a later boot.
 * Read once per process: it cannot change while the process lives.
 */
export function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = 'unknown';
    }
  }
  return cachedBootId;
}

let ticksPerSecond: number | undefined;

/** Clock ticks per second of `/proc`'s times (`getconf CLK_TCK`), read once. */
export function clockTicks(): number {
  return (ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()));
}
