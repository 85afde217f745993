import type { Readable, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import {
  descendantsOf,
  groupRunning,
  memberRunning,
  mergeMembers,
  spawnGroup,
  stopGroup,
  type TreeMember,
} from '../../os/index.js';

export interface ProcessExit {
  exitCode: number | null;
  signal: string | null;
}

/** How the process tree was brought down. */
export interface ShutdownReport extends ProcessExit {
  /** The strongest signal the driver had to send before the app-server exited, if any. */
  forced: 'SIGTERM' | 'SIGKILL' | null;
  /** False when something of the tree still ran after the final kill and wait. */
  treeGone: boolean;
}

const STDERR_TAIL_BYTES = 4096;
/** Bound on waiting for killed processes to be reaped (kill(-pgid, 0) sees zombies). */
const REAP_WAIT_MS = 5_000;

/**
 * One `codex app-server` process: the leader of its own process group (so an npm shim and the
 * native binary it starts die together), with its stdio pipes, exit and a stderr tail.
 */
export class CodexProcess {
  readonly pid: number;
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** Resolves when the group leader exits; never rejects. */
  readonly exited: Promise<ProcessExit>;
  exit: ProcessExit | undefined;
  #stderrTail = '';

  private constructor(child: ReturnType<typeof spawnGroup>, pid: number) {
    this.pid = pid;
    this.stdin = child.stdin!;
    this.stdout = child.stdout!;
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

  /**
   * Starts `command` in its own process group with exactly `env` (nothing inherited).
   * Resolves `{ ok: false, detail }` when the process could not start; never rejects.
   */
  static async start(
    command: string,
    args: readonly string[],
    options: { cwd: string; env: Record<string, string> },
  ): Promise<{ ok: true; process: CodexProcess } | { ok: false; detail: string }> {
    let child: ReturnType<typeof spawnGroup>;
    try {
      child = spawnGroup(command, args, { cwd: options.cwd, env: options.env });
    } catch (error) {
      return { ok: false, detail: `${command}: ${String((error as Error).message ?? error)}` };
    }
    if (child.pid === undefined) {
      const result = await child;
      return { ok: false, detail: `${command}: ${String(result.code ?? result.shortMessage ?? 'could not start')}` };
    }
    void child.then(() => {}); // reject:false — the outcome is observed through events, not this promise
    return { ok: true, process: new CodexProcess(child, child.pid) };
  }

  /** Last few KB of stderr (Codex logs there), for failure details. */
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

  /**
   * Ends the whole tree and waits for it: `closeInput()` (the app-server exits on end of input,
   * ending its tool processes itself) and up to `graceMs` for the exit; then SIGTERM to the group
   * and to every descendant, `graceMs` again; then SIGKILL. Descendants are snapshotted before
   * each step, because tool commands run in their own sessions and are orphaned (out of reach)
   * once the app-server is gone. Whatever still runs afterwards is SIGKILLed. Never rejects;
   * `treeGone: false` when something outlived the final wait.
   */
  async shutdown(graceMs: number, closeInput: () => void): Promise<ShutdownReport> {
    const tree = new Map<string, TreeMember>();
    const snapshot = (): TreeMember[] => {
      if (this.exit === undefined) mergeMembers(tree, descendantsOf(this.pid));
      return [...tree.values()];
    };
    let forced: ShutdownReport['forced'] = null;
    snapshot();
    closeInput();
    // The grace is the leader's: it ends when the app-server exits. Whatever still runs then, in the
    // group or of the snapshotted tree, is SIGKILLed; at once when the app-server exited on end of input.
    const leaderRuns = !(await this.exitedWithin(graceMs));
    const stop = await stopGroup(this.pid, {
      ...(leaderRuns ? { graceMs, settled: this.exited } : {}),
      outside: snapshot,
      // Helpers Codex started in its own group (lsb_release, git) are orphaned when it exits; until
      // init reaps them they keep the group id alive, so wait for the group itself to disappear.
      until: 'reaped',
      reapTimeoutMs: REAP_WAIT_MS,
    });
    if (leaderRuns) forced = stop.graceExpired ? 'SIGKILL' : 'SIGTERM';
    const exit = this.exit ?? { exitCode: null, signal: null };
    // Reported gone once nothing runs, reaped or not (the wait above was for the group id to go).
    const treeGone = !groupRunning(this.pid) && ![...tree.values()].some(memberRunning);
    return { ...exit, forced, treeGone };
  }
}
