import { readdirSync, readFileSync } from 'node:fs';

/** A process identified by pid *and* start time, so a recycled pid is never mistaken for it. */
export interface TreeMember {
  pid: number;
  start: string;
}

interface ProcEntry {
  state: string;
  ppid: number;
  start: string;
}

function readStat(pid: number): ProcEntry | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined; // gone, or no /proc
  }
  // Fields after the parenthesised command name: state(0) ppid(1) … starttime(19).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = fields[19];
  if (state === undefined || start === undefined) return undefined;
  return { state, ppid: Number(fields[1]), start };
}

/**
 * Every living descendant of `root` (not `root` itself), read from /proc; empty where /proc is
 * unavailable. Why the driver needs this beyond the process group: Codex runs each tool command
 * in a sandbox helper that starts its own session (`setsid`), so those commands are *not* in the
 * app-server's process group and a group signal does not reach them.
 */
export function descendantsOf(root: number): TreeMember[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, { pid: number; entry: ProcEntry }[]>();
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const entry = readStat(pid);
    if (entry === undefined || entry.state === 'Z' || entry.state === 'X') continue;
    const siblings = children.get(entry.ppid) ?? [];
    siblings.push({ pid, entry });
    children.set(entry.ppid, siblings);
  }
  const found: TreeMember[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const { pid, entry } of children.get(parent) ?? []) {
      found.push({ pid, start: entry.start });
      queue.push(pid);
    }
  }
  return found;
}

/** True while this exact process (same pid, same start time) runs; zombies do not count. */
export function memberRunning(member: TreeMember): boolean {
  const entry = readStat(member.pid);
  return entry !== undefined && entry.start === member.start && entry.state !== 'Z' && entry.state !== 'X';
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
  for (const member of more) into.set(`${member.pid}:${member.start}`, member);
}
