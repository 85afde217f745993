// CPU time of a process and every process below it, from /proc (Linux): what a PostgreSQL server
// spent, since its work runs in backends it forks, one per connection, not in the postmaster.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc's utime and stime (`getconf CLK_TCK`). */
function clockTicks(): number {
  return (ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()));
}

/** A process's parent pid and CPU ticks (user + system) from /proc/<pid>/stat, or undefined once it is gone. */
function stat(pid: number): { ppid: number; ticks: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may hold spaces or parentheses: fields follow the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // After the name: state(3) ppid(4) … utime(14) stime(15), numbered from 1 with pid and name first.
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

/**
 * Milliseconds of CPU used so far by `root` and the processes below it that are still running (a
 * backend that exited took its time with it: read before and after a window in which the
 * connections stay open).
 */
export function treeCpuMs(root: number): number {
  const all = new Map<number, { ppid: number; ticks: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s) all.set(Number(name), s);
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = all.get(p)?.ppid) if (p === root) return true;
    return false;
  };
  let ticks = 0;
  for (const [pid, s] of all) if (inTree(pid)) ticks += s.ticks;
  return (ticks * 1000) / clockTicks();
}
