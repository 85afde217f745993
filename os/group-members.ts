import { groupAlive } from './process-group.js';
import { isLiveState, listPids, procStat } from './proc-stat.js';

/**
 * Pids of the members of process group `pgid` that are still running (zombies excluded), read
 * from the process table. `undefined` where it cannot be read (then only `groupAlive` is available).
 *
 * Why not `kill(-pgid, 0)` alone: it also succeeds for zombies, and an init that does not reap
 * orphans (as in some containers, this machine included) keeps killed grandchildren as zombies.
 */
export function livingGroupMembers(pgid: number): number[] | undefined {
  const pids = listPids();
  if (pids === undefined) return undefined;
  return pids.filter((pid) => {
    const stat = procStat(pid); // undefined: exited while we scanned
    return stat !== undefined && stat.pgrp === pgid && isLiveState(stat.state);
  });
}

/**
 * True while a member of the group is running. Zombies (exited, not yet reaped by init) do not
 * count where the process table is readable: they run nothing and cannot be killed further.
 */
export function groupRunning(pgid: number): boolean {
  if (!groupAlive(pgid)) return false;
  const living = livingGroupMembers(pgid);
  return living === undefined ? true : living.length > 0;
}
