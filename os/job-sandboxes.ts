import { readFileSync } from 'node:fs';
import { killLeftovers, waitUntilStopped } from './leftovers.js';
import { listPids, procStat, isLiveState } from './proc-stat.js';
import type { TreeMember } from './process-tree.js';
import { MARKER_PREFIX, jobMarker } from './sandbox.js';

/** Every living process that carries a job's marker, by marker: one pass over the process table. */
export type MarkedSandboxes = ReadonlyMap<string, readonly TreeMember[]>;

/**
 * Every living process whose command line carries a job's marker (`--unsetenv ORDIVON_JOB_…`), by
 * marker: the bwrap processes of each job's sandboxes (the one that made it and the one that is
 * its pid namespace's init). Empty where the process table cannot be read. One pass serves any
 * number of jobs: a recovery abandoning many reads the table once.
 *
 * Why a recovery needs this beyond a job's recorded process group: bwrap binds itself to its
 * parent (`--die-with-parent`) only partway through its setup. A Host killed between the spawn and
 * that point, or before the job record names the pid, leaves a sandbox that runs on, orphaned, with
 * the agent inside it writing the workspace, and no record that leads to it.
 */
export function markedSandboxes(): MarkedSandboxes {
  const marked = new Map<string, TreeMember[]>();
  for (const pid of listPids() ?? []) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const at = args.findIndex((arg, i) => arg.startsWith(MARKER_PREFIX) && args[i - 1] === '--unsetenv');
    if (at < 0) continue;
    const stat = procStat(pid);
    if (stat === undefined || !isLiveState(stat.state)) continue;
    const members = marked.get(args[at]!) ?? [];
    members.push({ pid, startTicks: stat.startTicks });
    marked.set(args[at]!, members);
  }
  return marked;
}

/** The processes of `jobId`'s sandboxes, from `marked` (default: the process table now). */
export function jobSandboxes(jobId: string, marked: MarkedSandboxes = markedSandboxes()): readonly TreeMember[] {
  return marked.get(jobMarker(jobId)) ?? [];
}

/**
 * SIGKILLs every sandbox of `jobId` (`jobSandboxes`) and waits, at most `maxMs`, until none runs.
 * The init of a pid namespace takes SIGKILL from outside it, and its death ends every process in
 * the sandbox. Answers how many were found and whether they are gone.
 */
export async function killJobSandboxes(
  jobId: string,
  maxMs: number,
  marked?: MarkedSandboxes,
): Promise<{ found: number; gone: boolean }> {
  const found = jobSandboxes(jobId, marked);
  if (found.length === 0) return { found: 0, gone: true };
  const killed = killLeftovers(found.map((member) => ({ ...member, exited: false })));
  return { found: found.length, gone: await waitUntilStopped(killed, maxMs) };
}
