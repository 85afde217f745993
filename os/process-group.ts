import { execa, type Options, type ResultPromise } from 'execa';
import { processStartTicks, readProcStat } from './proc-stat.js';
import { sandboxCommand, type Sandbox } from './sandbox.js';

/**
 * A process-group leader as it was started: its pid, which is the group's id, and its start time
 * in clock ticks (0 where `/proc` cannot be read). Every group signal of Ordivon goes through one,
 * because a group id is a pid and pids are reused: once the leader and every member are gone, the
 * number may name a new process, and many programs make themselves group leaders (a PostgreSQL
 * server does for each connection), so `kill(-pgid)` on a stale id signals a stranger's group.
 */
export interface GroupLeader {
  readonly pid: number;
  readonly startTicks: number;
}

/**
 * The leader `pid` with its start time read now. Call it while `pid` is this process's child and
 * not yet reaped (right after spawning it): until then the pid cannot have been reused.
 */
export function groupLeader(pid: number): GroupLeader {
  return { pid, startTicks: processStartTicks(pid) };
}

/**
 * Whether a group with `leader.pid` as its id can still be the leader's: the leader runs (or is a
 * zombie) with the start time it had, or it is gone, and then a group of that id can only be its
 * remains (Linux hands out no pid still in use as a process-group id). A process holding the pid
 * with another start time means the old group is gone and the id belongs to someone else. Where
 * the start time is unknown (0) or `/proc` cannot be read, the answer degrades to true.
 */
export function ownsGroup(leader: GroupLeader): boolean {
  if (leader.startTicks === 0) return true;
  const stat = readProcStat(leader.pid);
  return typeof stat !== 'object' || stat.startTicks === leader.startTicks;
}

/**
 * Starts a provider process as the leader of its own process group, so that the whole tree
 * (an npm shim and the native binary it spawns, a shell and its children) can be stopped with
 * one signal. The subprocess never rejects: drivers turn its outcome into data.
 *
 * With `sandbox`, the process is bwrap, which runs `command` confined (`sandboxCommand`): the
 * group is bwrap's, and everything the command starts lives in the sandbox's pid namespace, which
 * ends with it. Throws `SandboxRefused` (nothing started) when the sandbox would reveal a hidden path.
 */
export function spawnGroup(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; extendEnv?: boolean; sandbox?: Sandbox | undefined },
): ResultPromise<Options & { reject: false; detached: true; buffer: false }> {
  const spawned = options.sandbox
    ? sandboxCommand(options.sandbox, command, args, options.env['PATH'])
    : { command, args };
  return execa(spawned.command, spawned.args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: options.extendEnv ?? false,
    detached: true,
    reject: false,
    buffer: false,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    cleanup: true,
  } as Options & { reject: false; detached: true; buffer: false }) as never;
}

/**
 * Sends `signal` to every process in the group `leader` leads; false (nothing sent) when the group is
 * gone or its id now belongs to another process (`ownsGroup`). A group already gone is not an error.
 */
export function signalGroup(leader: GroupLeader | undefined, signal: NodeJS.Signals): boolean {
  if (leader === undefined || !ownsGroup(leader)) return false;
  try {
    process.kill(-leader.pid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/** True while any process of the group led by `pid` is alive. */
export function groupAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
