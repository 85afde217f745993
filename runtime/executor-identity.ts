import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { processStat } from '../store/state-root.js';
import type { ExecutorIdentity } from './job-record.js';

/**
 * Liveness is decided from the operating system, never from LMDB: a process is identified by
 * (hostname, boot id, pid, start time in clock ticks). A pid that was reused after its owner died has
 * a different start time; a reboot changes the boot id. This is Linux-specific (`/proc`); elsewhere
 * the start time is 0 and the check degrades to "pid exists".
 */

/** Reads `/proc/<pid>/stat` and returns its state letter and start time, or `undefined` when the pid is gone. */
export const procStat: (pid: number) => { state: string; startTicks: number; pgrp: number } | undefined = processStat;

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The identity of the current process; `executorId` defaults to `<hostname>:<pid>:<startTicks>`. */
export function currentExecutor(executorId?: string): ExecutorIdentity {
  const startTicks = procStat(process.pid)?.startTicks ?? 0;
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

/** True when `pid` runs and (when known) started at `startTicks`; a zombie counts as dead. */
export function processAlive(pid: number, startTicks: number): boolean {
  const stat = procStat(pid);
  if (stat === undefined) return startTicks === 0 ? pidExists(pid) : false;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return startTicks === 0 || stat.startTicks === startTicks;
}
