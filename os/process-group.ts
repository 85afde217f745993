import { execa, type Options, type ResultPromise } from 'execa';

/**
 * Starts a provider process as the leader of its own process group, so that the whole tree
 * (an npm shim and the native binary it spawns, a shell and its children) can be stopped with
 * one signal. The subprocess never rejects: drivers turn its outcome into data.
 */
export function spawnGroup(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; extendEnv?: boolean },
): ResultPromise<Options & { reject: false; detached: true; buffer: false }> {
  return execa(command, args, {
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

/** Sends `signal` to every process in the group led by `pid`; a group already gone is not an error. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, signal);
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
