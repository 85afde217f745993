import { accessSync, constants } from 'node:fs';
import { isLiveState, procStat, readProcStat } from './proc-stat.js';

/**
 * Whether a process is the same one as recorded is decided from the operating system, never from
 * stored state: a process is (boot id, pid, start time in clock ticks). A pid reused after its owner
 * died has another start time; a reboot changes the boot id (`bootId`). Where there is no `/proc`,
 * the start time is 0 and the checks degrade to "the pid exists".
 */

/** True when `kill(pid, 0)` finds the pid (a process we may not signal counts: it exists). Zombies count. */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when `pid` runs and, when `startTicks` is known (not 0), is the process that started then: a
 * zombie counts as dead, and so does a later process that reused the pid.
 */
export function processAlive(pid: number, startTicks: number): boolean {
  const stat = procStat(pid);
  if (stat === undefined) return startTicks === 0 ? pidExists(pid) : false;
  if (!isLiveState(stat.state)) return false;
  return startTicks === 0 || stat.startTicks === startTicks;
}

/** True while `pid` runs (a zombie does not); falls back to `kill(pid, 0)` where its stat cannot be read. */
export function processRunning(pid: number): boolean {
  const stat = readProcStat(pid);
  if (stat === 'gone') return false;
  if (stat === 'unreadable') return pidExists(pid);
  return isLiveState(stat.state);
}

/** Whether `path` is a file this process may execute (a provider binary found before spawning it). */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
