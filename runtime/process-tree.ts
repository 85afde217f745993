import { readdirSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { groupAlive, signalGroup } from '../drivers/process-group.js';
import { procStat } from './executor-identity.js';

const POLL_MS = 25;

/**
 * True while some process of group `pgid` is running. Zombies (exited, not yet reaped by init) do
 * not count: they run nothing and cannot be killed further. Falls back to `kill(-pgid, 0)` where
 * `/proc` is unavailable.
 */
export function groupHasLiveMembers(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return groupAlive(pgid);
  }
  if (!groupAlive(pgid)) return false;
  for (const name of entries) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const stat = procStat(pid);
    if (stat !== undefined && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') return true;
  }
  return false;
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (condition()) return true;
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
}

/**
 * Stops every process of group `pgid`: SIGTERM, then SIGKILL to whatever still runs after
 * `graceMs`, then waits (up to `reapTimeoutMs`) until the kernel no longer knows the group, i.e.
 * `kill(-pgid, 0)` fails with ESRCH. Returns whether the group is gone. Never throws for a group
 * that is already gone. Orphans are reaped by init, which may take a moment; that wait is why this
 * polls rather than waiting on an event (there is no exit event for non-children).
 */
export async function stopGroup(pgid: number, graceMs: number, reapTimeoutMs: number): Promise<boolean> {
  if (!groupAlive(pgid)) return true;
  signalGroup(pgid, 'SIGTERM');
  const stopped = await waitUntil(() => !groupHasLiveMembers(pgid), graceMs);
  if (!stopped) signalGroup(pgid, 'SIGKILL');
  return waitUntil(() => !groupAlive(pgid), reapTimeoutMs);
}

/** Kills group `pgid` at once (SIGKILL) and waits up to `reapTimeoutMs` for it to disappear. */
export async function killGroup(pgid: number, reapTimeoutMs: number): Promise<boolean> {
  signalGroup(pgid, 'SIGKILL');
  return waitUntil(() => !groupAlive(pgid), reapTimeoutMs);
}
