import { hostname } from 'node:os';
import { bootId, processAlive, processStartTicks } from '../os/index.js';
import type { ExecutorIdentity } from './job-record.js';

/**
 * Liveness is decided from the operating system, never from LMDB: an executor is identified by
 * (hostname, boot id, pid, start time in clock ticks), read by os/ (`bootId`, `processStartTicks`).
 * A pid that was reused after its owner died has a different start time; a reboot changes the boot
 * id. Linux-specific; elsewhere the start time is 0 and the check degrades to "pid exists".
 */

/** The identity of the current process; `executorId` defaults to `<hostname>:<pid>:<startTicks>`. */
export function currentExecutor(executorId?: string): ExecutorIdentity {
  const startTicks = processStartTicks(process.pid);
  const host = hostname();
  return {
    executorId: executorId ?? `${host}:${process.pid}:${startTicks}`,
    hostname: host,
    bootId: bootId(),
    pid: process.pid,
    startTicks,
  };
}

/** True when `other` is this very process. */
export function isSameProcess(a: ExecutorIdentity, b: ExecutorIdentity): boolean {
  return a.hostname === b.hostname && a.bootId === b.bootId && a.pid === b.pid && a.startTicks === b.startTicks;
}

/**
 * Whether the process recorded as `owner` may still be running. Fails safe: an executor on another
 * host cannot be checked and counts as alive, so its jobs are never taken from it.
 */
export function executorAlive(owner: ExecutorIdentity, self: ExecutorIdentity): boolean {
  if (owner.hostname !== self.hostname) return true;
  if (owner.bootId !== self.bootId) return false;
  return processAlive(owner.pid, owner.startTicks);
}
