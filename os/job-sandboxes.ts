import { readFileSync } from 'node:fs';
import { killLeftovers, waitUntilStopped } from './leftovers.js';
import { listPids, procStat, isLiveState } from './proc-stat.js';
import type { TreeMember } from './process-tree.js';
import { jobMarker } from './sandbox.js';

/**
 * Every living process whose command line carries `jobId`'s marker: the bwrap processes of that
 * job's sandboxes (the one that made it and the one that is its pid namespace's init). Empty where
 * the process table cannot be read.
 *
 * Why a recovery needs this beyond the job's recorded process group: bwrap binds itself to its
 * parent (`--die-with-parent`) only partway through its setup. A Host killed between the spawn and
 * that point, or before the job record names the pid, leaves a sandbox that runs on, orphaned, with
 * the agent inside it writing the workspace, and no record that leads to it.
 */
export function jobSandboxes(jobId: string): TreeMember[] {
  const marker = jobMarker(jobId);
  const found: TreeMember[] = [];
  for (const pid of listPids() ?? []) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!args.some((arg, i) => arg === marker && args[i - 1] === '--unsetenv')) continue;
    const stat = procStat(pid);
    if (stat !== undefined && isLiveState(stat.state)) found.push({ pid, startTicks: stat.startTicks });
  }
  return found;
}

/**
 * SIGKILLs every sandbox of `jobId` (`jobSandboxes`) and waits, at most `maxMs`, until none runs.
 * The init of a pid namespace takes SIGKILL from outside it, and its death ends every process in
 * the sandbox. Answers how many were found and whether they are gone.
 */
export async function killJobSandboxes(jobId: string, maxMs: number): Promise<{ found: number; gone: boolean }> {
  const found = jobSandboxes(jobId);
  if (found.length === 0) return { found: 0, gone: true };
  const killed = killLeftovers(found.map((member) => ({ ...member, exited: false })));
  return { found: found.length, gone: await waitUntilStopped(killed, maxMs) };
}
