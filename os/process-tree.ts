import { clockTicks, listPids, procStat, isLiveState, type ProcStat } from './proc-stat.js';
import { processAlive } from './process-identity.js';

/** A process identified by pid *and* start time, so a recycled pid is never mistaken for it. */
export interface TreeMember {
  pid: number;
  startTicks: number;
}

/**
 * Every living descendant of `root` (not `root` itself); empty where the process table cannot be
 * read. Why a driver needs this beyond the process group: Codex runs each tool command in a sandbox
 * helper that starts its own session (`setsid`), so those commands are *not* in the app-server's
 * process group and a group signal does not reach them.
 */
export function descendantsOf(root: number): TreeMember[] {
  const children = new Map<number, TreeMember[]>();
  for (const pid of listPids() ?? []) {
    const stat = procStat(pid);
    if (stat === undefined || !isLiveState(stat.state)) continue;
    const siblings = children.get(stat.ppid) ?? [];
    siblings.push({ pid, startTicks: stat.startTicks });
    children.set(stat.ppid, siblings);
  }
  const found: TreeMember[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const member of children.get(parent) ?? []) {
      found.push(member);
      queue.push(member.pid);
    }
  }
  return found;
}

/** True while this exact process (same pid, same start time) runs; zombies do not count. */
export function memberRunning(member: TreeMember): boolean {
  return processAlive(member.pid, member.startTicks);
}

/** Signals each member that still runs; returns how many were signalled. Never throws. */
export function signalMembers(members: Iterable<TreeMember>, signal: NodeJS.Signals): number {
  let count = 0;
  for (const member of members) {
    if (!memberRunning(member)) continue;
    try {
      process.kill(member.pid, signal);
      count++;
    } catch {
      // exited between the check and the signal
    }
  }
  return count;
}

/** Adds the members of `more` not already in `into` (keyed by pid and start time). */
export function mergeMembers(into: Map<string, TreeMember>, more: Iterable<TreeMember>): void {
  for (const member of more) into.set(`${member.pid}:${member.startTicks}`, member);
}

/**
 * Milliseconds of CPU used so far by `root` and the processes below it that still run: what a
 * server that forks a process per connection (PostgreSQL) spent. A child that exited took its time
 * with it, so read before and after a window in which the connections stay open.
 */
export function treeCpuMs(root: number): number {
  const all = new Map<number, ProcStat>();
  for (const pid of listPids() ?? []) {
    const stat = procStat(pid);
    if (stat) all.set(pid, stat);
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = all.get(p)?.ppid) if (p === root) return true;
    return false;
  };
  let ticks = 0;
  for (const [pid, stat] of all) if (inTree(pid)) ticks += stat.cpuTicks;
  return (ticks * 1000) / clockTicks();
}
