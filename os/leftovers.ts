import { groupRunning } from './group-members.js';
import { ownsGroup, signalGroup } from './process-group.js';
import { processAlive, processRunning } from './process-identity.js';
import { waitUntil } from './stop-group.js';

/** Leftovers die within milliseconds of SIGKILL and a run's result waits on them: look often. */
export const LEFTOVER_POLL_MS = 5;

/**
 * SIGKILLs what is left of children a dead or finished driver started: the whole group for a
 * group leader, else the single process if its exit was never observed (a pid whose exit was seen
 * may have been reused). Each child is known by pid and start time (read when it was spawned), so
 * neither a group nor a process that took the pid over since is signalled. Returns the pids that
 * were signalled. Unlike `stopGroup`: no SIGTERM (the
 * driver that could have shut them down politely is dead or done), children that are not group
 * leaders are covered, and the wait is the caller's (`waitUntilStopped` on what this returns).
 */
export function killLeftovers(children: Iterable<{ pid: number; startTicks: number; exited: boolean }>): number[] {
  const killed: number[] = [];
  for (const { pid, startTicks, exited } of children) {
    const leader = { pid, startTicks };
    if (ownsGroup(leader) && groupRunning(pid)) {
      if (signalGroup(leader, 'SIGKILL')) killed.push(pid);
    } else if (!exited && processAlive(pid, startTicks)) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      } catch {
        // gone between the check and the signal
      }
    }
  }
  return killed;
}

/**
 * Waits (polling every few ms, at most `maxMs`) until none of `pids` — group leaders or single
 * processes — runs any more. `kill()` returns before a SIGKILLed process is torn down; this makes
 * "the tree is dead" hold when a run's result is delivered. Returns false on timeout.
 */
export async function waitUntilStopped(pids: readonly number[], maxMs = 2_000): Promise<boolean> {
  return waitUntil(() => pids.every((pid) => !groupRunning(pid) && !processRunning(pid)), maxMs, LEFTOVER_POLL_MS);
}
