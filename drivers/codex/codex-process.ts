import type { Readable, Writable } from 'node:stream';
import {
  descendantsOf,
  groupRunning,
  memberRunning,
  mergeMembers,
  stopGroup,
  type GroupLeader,
  type TreeMember,
} from '../../os/index.js';
import { ProviderProcess, REAP_WAIT_MS, spawnProvider } from '../provider-process.js';
import type { ProviderGroup, ProviderShutdown, ProviderSpawnOptions } from '../provider-process.js';

/** How the process tree was brought down. */
export interface ShutdownReport extends ProviderShutdown {
  /** False when something of the tree still ran after the final kill and wait. */
  treeGone: boolean;
}

/**
 * One `codex app-server` process (a `ProviderProcess`) with its stdio pipes.
 */
export class CodexProcess extends ProviderProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;

  private constructor(child: ProviderGroup, leader: GroupLeader) {
    super(child, leader);
    this.stdin = child.stdin!;
    this.stdout = child.stdout!;
  }

  /** Starts the app-server (see `spawnProvider`). */
  static async start(
    command: string,
    args: readonly string[],
    options: ProviderSpawnOptions,
  ): Promise<{ ok: true; process: CodexProcess } | { ok: false; detail: string }> {
    const started = await spawnProvider(command, args, options);
    return started.ok ? { ok: true, process: new CodexProcess(started.child, started.leader) } : started;
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
    const stop = await stopGroup(this.leader, {
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
