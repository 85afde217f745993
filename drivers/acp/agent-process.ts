import { groupAlive, signalGroup, stopGroup, type GroupLeader } from '../../os/index.js';
import { ProviderProcess, REAP_WAIT_MS, spawnProvider } from '../provider-process.js';
import type { ProviderGroup, ProviderShutdown, ProviderSpawnOptions } from '../provider-process.js';
import type { WireLedger } from './wire-ledger.js';

/** How the run's process tree ended, for the receipt and the failure detail. */
export interface ShutdownReport extends ProviderShutdown {
  /** False when members of the group were still alive after the final kill and wait. */
  groupGone: boolean;
}

/**
 * One ACP agent process in its own process group, with its stdio turned into the web streams the
 * SDK wants. Every byte in both directions passes through the ledger first, so the receipt sees
 * the raw wire before the SDK validates (and possibly drops) anything.
 */
export class AgentProcess extends ProviderProcess {
  /** Resolves when the agent's stdout has ended or closed (all its lines reached the ledger). */
  readonly outputEnded: Promise<void>;
  readonly toAgent: WritableStream<Uint8Array>;
  readonly fromAgent: ReadableStream<Uint8Array>;
  #shutDown = false;

  private constructor(child: ProviderGroup, leader: GroupLeader, ledger: WireLedger) {
    super(child, leader);
    const stdin = child.stdin!;
    stdin.on('error', () => {}); // EPIPE after the agent died: the exit path reports it
    this.toAgent = new WritableStream<Uint8Array>({
      write: (chunk) =>
        new Promise<void>((resolve, reject) => {
          // After stdin is closed (shutdown), drop writes quietly: a write error would tear the SDK connection down.
          if (stdin.writableEnded || stdin.destroyed) return resolve();
          ledger.toAgent(chunk);
          stdin.write(chunk, (error) => (error ? reject(error) : resolve()));
        }),
    });
    // The ledger reads stdout itself, independent of how fast the SDK consumes: the receipt sees
    // every line, and the SDK gets the lines it needs (requests, responses) re-framed.
    const encoder = new TextEncoder();
    let sdkReading = true;
    let ended!: () => void;
    this.outputEnded = new Promise<void>((resolve) => (ended = resolve));
    this.fromAgent = new ReadableStream<Uint8Array>({
      start(controller) {
        const forward = (lines: string[]) => {
          if (sdkReading && lines.length > 0) controller.enqueue(encoder.encode(lines.map((l) => l + '\n').join('')));
        };
        let open = true;
        const finish = () => {
          if (!open) return;
          open = false;
          forward(ledger.endOfAgentOutput());
          if (sdkReading) controller.close();
          ended();
        };
        child.stdout!.on('data', (chunk: Buffer) => forward(ledger.fromAgent(chunk)));
        child.stdout!.on('error', () => {}); // followed by 'close'
        child.stdout!.once('end', finish);
        child.stdout!.once('close', finish);
      },
      cancel() {
        sdkReading = false;
      },
    });
  }

  /** Starts the agent (see `spawnProvider`), its wire passing through `ledger`. */
  static async start(
    command: string,
    args: readonly string[],
    options: ProviderSpawnOptions,
    ledger: WireLedger,
  ): Promise<{ ok: true; process: AgentProcess } | { ok: false; detail: string }> {
    const started = await spawnProvider(command, args, options);
    return started.ok ? { ok: true, process: new AgentProcess(started.child, started.leader, ledger) } : started;
  }

  /**
   * SIGKILLs whatever is left of the group, without waiting, unless `shutdown()` already ran (then
   * the group is gone and its id may, in principle, belong to someone else by now). A last resort
   * for a path that threw, synchronous so a `finally` can call it; the stop is `shutdown()`.
   */
  killGroup(): void {
    if (!this.#shutDown && groupAlive(this.pid)) signalGroup(this.leader, 'SIGKILL');
  }

  /** Closes the agent's stdin (end of input); idempotent. */
  closeStdin(): void {
    const stdin = this.child.stdin!;
    if (!stdin.writableEnded && !stdin.destroyed) stdin.end();
  }

  /**
   * Ends the process tree and waits for it: optionally close stdin and give the agent `graceMs`
   * to exit on its own, then SIGTERM the group, wait `graceMs` again, then SIGKILL it. Members left
   * behind by an exited leader are killed too. Never rejects; `groupGone: false` when something
   * outlived the final wait.
   */
  async shutdown(graceMs: number, closeStdinFirst: boolean): Promise<ShutdownReport> {
    let forced: ShutdownReport['forced'] = null;
    if (closeStdinFirst) {
      this.closeStdin();
      await this.exitedWithin(graceMs);
    }
    // The grace is the leader's: it ends when the agent exits. Members the leader left behind (a
    // daemonised helper, a shell's child) then get SIGKILL, or at once when the agent exited on
    // its own: they do not outlive the run. Killed members stay visible to kill(-pgid, 0) until
    // they are reaped (by us or by init), which the report's `groupGone` waits for.
    const leaderRuns = this.exit === undefined;
    const stop = await stopGroup(this.leader, {
      ...(leaderRuns ? { graceMs, settled: this.exited } : {}),
      until: 'reaped',
      reapTimeoutMs: REAP_WAIT_MS,
    });
    if (leaderRuns) forced = stop.graceExpired ? 'SIGKILL' : 'SIGTERM';
    this.closeStdin();
    const exit = this.exit ?? { exitCode: null, signal: null };
    this.#shutDown = stop.gone;
    return { ...exit, forced, groupGone: stop.gone };
  }
}
