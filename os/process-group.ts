import type { Readable } from 'node:stream';
import { execa, type Options, type ResultPromise } from 'execa';
import { z } from 'zod';
import { processStartTicks, readProcStat } from './proc-stat.js';
import type { TreeMember } from './process-tree.js';
import { SANDBOX_INFO_FD, sandboxCommand, type Sandbox } from './sandbox.js';

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
  /**
   * A confined group's sandbox: the first process inside it (its pid namespace's init), as bwrap
   * reports it once it has made it; `undefined` when bwrap ended before making one. `stopGroup`
   * stops it with the group (see there why bwrap's own `--die-with-parent` is not enough).
   */
  readonly sandboxInit?: Promise<TreeMember | undefined>;
}

/** A process `spawnGroup` started. */
export type GroupChild = ResultPromise<Options & { reject: false; detached: true; buffer: false }>;

/** The sandbox init each confined spawn will report, by the process spawnGroup returned for it. */
const sandboxInits = new WeakMap<GroupChild, Promise<TreeMember | undefined>>();

/**
 * The leader `pid` with its start time read now. Call it while `pid` is this process's child and
 * not yet reaped (right after spawning it): until then the pid cannot have been reused. Given the
 * `child` spawnGroup returned for it, a confined leader carries its sandbox's init.
 */
export function groupLeader(pid: number, child?: GroupChild): GroupLeader {
  const sandboxInit = child === undefined ? undefined : sandboxInits.get(child);
  const leader = { pid, startTicks: processStartTicks(pid) };
  return sandboxInit === undefined ? leader : { ...leader, sandboxInit };
}

/** bwrap's `--info-fd` report: a JSON object whose `child-pid` is the sandbox's first process, as this machine numbers it. */
const SandboxInfo = z.object({ 'child-pid': z.number().int().positive() });

/** Resolves with the process bwrap reports on `info`, once bwrap closed it; `undefined` when there is none or it does not parse. */
function readSandboxInit(info: Readable): Promise<TreeMember | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    info.on('data', (chunk: Buffer) => chunks.push(chunk));
    info.once('error', () => resolve(undefined));
    info.once('close', () => {
      let parsed: ReturnType<typeof SandboxInfo.safeParse>;
      try {
        parsed = SandboxInfo.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        return resolve(undefined);
      }
      if (!parsed.success) return resolve(undefined);
      const pid = parsed.data['child-pid'];
      resolve({ pid, startTicks: processStartTicks(pid) });
    });
  });
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
): GroupChild {
  const spawned = options.sandbox
    ? sandboxCommand(options.sandbox, command, args, options.env['PATH'])
    : { command, args };
  // A confined spawn gets one more pipe, at SANDBOX_INFO_FD, on which bwrap reports its sandbox.
  const stdio = options.sandbox ? (['pipe', 'pipe', 'pipe', 'pipe'] as const) : (['pipe', 'pipe', 'pipe'] as const);
  const child = execa(spawned.command, spawned.args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: options.extendEnv ?? false,
    detached: true,
    reject: false,
    buffer: false,
    stdio,
    cleanup: true,
  } as Options & { reject: false; detached: true; buffer: false }) as never as GroupChild;
  const info = options.sandbox ? (child.stdio[SANDBOX_INFO_FD] as Readable | undefined) : undefined;
  if (info) sandboxInits.set(child, readSandboxInit(info));
  return child;
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
