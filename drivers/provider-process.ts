import { setTimeout as delay } from 'node:timers/promises';
import { groupLeader, spawnGroup, type GroupLeader, type Sandbox } from '../os/index.js';

export interface ProcessExit {
  exitCode: number | null;
  signal: string | null;
}

/** The strongest signal a driver had to send before its provider's process exited, if any. */
export type ForcedSignal = 'SIGTERM' | 'SIGKILL' | null;

/**
 * How a provider's process tree was brought down: the leader's exit and the strongest signal the
 * driver had to send before it exited. Each driver adds whether its tree is gone.
 */
export interface ProviderShutdown extends ProcessExit {
  forced: ForcedSignal;
}

/** Bound on waiting for killed processes to be reaped (kill(-pgid, 0) sees zombies until they are). */
export const REAP_WAIT_MS = 5_000;

/** A spawned provider group (execa's child, `reject: false`). */
export type ProviderGroup = ReturnType<typeof spawnGroup>;

const STDERR_TAIL_BYTES = 4096;

/** Where a provider starts: its cwd, exactly this environment, and the sandbox when it is confined. */
export interface ProviderSpawnOptions {
  cwd: string;
  env: Record<string, string>;
  sandbox?: Sandbox | undefined;
}

/**
 * Starts `command` in its own process group with exactly `env` (nothing inherited), so an npm
 * shim and the native binary it starts die together. Resolves `{ ok: false, detail }` when the
 * process could not start; never rejects.
 */
export async function spawnProvider(
  command: string,
  args: readonly string[],
  options: ProviderSpawnOptions,
): Promise<{ ok: true; child: ProviderGroup; leader: GroupLeader } | { ok: false; detail: string }> {
  let child: ProviderGroup;
  try {
    child = spawnGroup(command, args, options);
  } catch (error) {
    return { ok: false, detail: `${command}: ${String((error as Error).message ?? error)}` };
  }
  if (child.pid === undefined) {
    const result = await child;
    return { ok: false, detail: `${command}: ${String(result.code ?? result.shortMessage ?? 'could not start')}` };
  }
  // Read before anything can reap the child: every later group signal checks it (os/ ownsGroup).
  const leader = groupLeader(child.pid, child);
  void child.then(() => {}); // reject:false — the outcome is observed through events, not this promise
  return { ok: true, child, leader };
}

/**
 * What every provider's process is to its driver: the leader of its own group, its exit (a
 * promise that never rejects) and the last few KB of its stderr for failure details. The ACP and
 * Codex drivers add their own wire and shutdown on top.
 */
export class ProviderProcess {
  readonly pid: number;
  /** The group's leader as started: what every signal to the group is checked against. */
  readonly leader: GroupLeader;
  /** Resolves when the group leader exits; never rejects. */
  readonly exited: Promise<ProcessExit>;
  exit: ProcessExit | undefined;
  protected readonly child: ProviderGroup;
  #stderrTail = '';

  protected constructor(child: ProviderGroup, leader: GroupLeader) {
    this.child = child;
    this.leader = leader;
    this.pid = leader.pid;
    this.exited = new Promise<ProcessExit>((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { exitCode: code, signal };
        resolve(this.exit);
      });
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      this.#stderrTail = (this.#stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
  }

  /** Last few KB of the provider's stderr, for failure details. */
  get stderrTail(): string {
    return this.#stderrTail.trim();
  }

  /** Resolves true if the leader exits within `ms`. */
  async exitedWithin(ms: number): Promise<boolean> {
    if (this.exit !== undefined) return true;
    const controller = new AbortController();
    const exited = await Promise.race([
      this.exited.then(() => true),
      delay(ms, false, { signal: controller.signal }).catch(() => false),
    ]);
    controller.abort();
    return exited;
  }
}
