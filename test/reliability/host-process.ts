import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ClusterWriterArgs } from '../fixtures/reliability/cluster-writer-args.js';

const WRITER = fileURLToPath(new URL('../fixtures/reliability/cluster-writer.js', import.meta.url));

/** What every Host process of one torture run reported, in arrival order. */
export interface WriterLog {
  acks: Array<{ hostId: string; taskId: string; revision: number; eventId: string }>;
  /** Appends refused `lease_lost`; `afterResume`: printed by a process after it was let go from a pause or a partition. */
  refusals: Array<{ hostId: string; taskId: string; eventId: string; afterResume: boolean }>;
  /** `error …` lines and unexpected exits: defects, whatever the audit finds. */
  problems: string[];
  /** Host processes that exited when the torture had neither killed nor stopped them (each is also a problem). */
  unexpectedExits: number;
}

interface Waiter {
  test(line: string): boolean;
  resolve(line: string): void;
  reject(error: Error): void;
}

/**
 * A fixture Host run as a child process with its arguments as one JSON argument: the torture
 * waits on its stdout lines (a count, a line of a kind) instead of on time, and an exit it did not
 * ask for (`kill`, `stop`) is a problem. Subclasses read each line (`onLine`).
 */
export abstract class LineProcess<A extends { hostId: string }> {
  /** stdout lines so far. */
  lines = 0;
  /** Set before a kill or stop the torture means: any other exit is a problem. */
  private expectedExit = false;
  protected readonly child: ChildProcess;
  private readonly waiters = new Set<Waiter>();
  private stderr = '';
  /** Resolves when the process exited and its stdout ended (every line it printed is counted). */
  readonly closed: Promise<void>;

  constructor(
    script: string,
    readonly args: A,
    /** Where spawn failures, exits nobody asked for and late stops are reported. */
    protected readonly problems: string[],
    unexpectedExit: () => void = () => {},
  ) {
    this.child = spawn(process.execPath, [script, JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => (this.stderr = (this.stderr + d).slice(-4000)));
    // A write to a process that just died must not throw in the parent.
    this.child.stdin!.on('error', () => undefined);
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.line(line));
    this.closed = new Promise((resolve) => {
      this.child.on('error', (error) => problems.push(`${args.hostId}: spawn failed: ${error.message}`));
      this.child.on('close', (code, signal) => {
        if (!this.expectedExit) {
          unexpectedExit();
          problems.push(`${args.hostId} exited on its own (${code ?? signal}): ${this.stderr.slice(-2000)}`);
        }
        const gone = new Error(`${args.hostId} exited (${code ?? signal}) before the line waited for`);
        for (const waiter of this.waiters) waiter.reject(gone);
        this.waiters.clear();
        resolve();
      });
    });
  }

  get hostId(): string {
    return this.args.hostId;
  }

  /** Reads one stdout line, before the waiters are asked about it. */
  protected abstract onLine(line: string): void;

  private line(line: string): void {
    this.lines++;
    this.onLine(line);
    for (const waiter of [...this.waiters])
      if (waiter.test(line)) {
        this.waiters.delete(waiter);
        waiter.resolve(line);
      }
  }

  /** Resolves with the first line from now on that passes `test`; rejects after `ms` or if the process exits first. */
  untilLine(test: (line: string) => boolean, ms: number, what: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`${this.hostId}: no ${what} within ${ms} ms`));
      }, ms);
      const waiter: Waiter = {
        test,
        resolve: (line) => (clearTimeout(timer), resolve(line)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      };
      this.waiters.add(waiter);
    });
  }

  async kill(): Promise<void> {
    this.expectedExit = true;
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.closed;
  }

  /** A clean stop (the Host drains and releases its leases); SIGKILL if it has not exited after `ms`. */
  async stop(ms: number): Promise<void> {
    this.expectedExit = true;
    this.child.stdin!.write('stop\n');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
    const outcome = await Promise.race([this.closed, late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      this.problems.push(`${this.hostId} did not stop within ${ms} ms`);
      await this.kill();
    }
  }
}

/**
 * One cluster-writer.ts child process: its lines are parsed into the shared log as they arrive,
 * and the torture waits on them (a count of lines, a line of a kind) instead of on time.
 */
export class HostProcess extends LineProcess<ClusterWriterArgs> {
  /** Set once the process was SIGCONTed or its proxy healed: its refusals count as the fenced wake-up. */
  resumed = false;

  constructor(
    args: ClusterWriterArgs,
    private readonly log: WriterLog,
  ) {
    super(WRITER, args, log.problems, () => log.unexpectedExits++);
  }

  protected onLine(line: string): void {
    const [kind, taskId, third, eventId] = line.split(' ');
    if (kind === 'ack' && taskId && eventId)
      this.log.acks.push({ hostId: this.hostId, taskId, revision: Number(third), eventId });
    else if (kind === 'refused' && taskId && eventId)
      this.log.refusals.push({ hostId: this.hostId, taskId, eventId, afterResume: this.resumed });
    else if (kind === 'error') this.log.problems.push(`${this.hostId}: ${line}`);
  }

  /** Resolves once `more` further lines arrived. */
  async untilMoreLines(more: number, ms: number): Promise<void> {
    const target = this.lines + more;
    await this.untilLine(() => this.lines >= target, ms, `${more} more lines`);
  }

  /** Sends a command on stdin and resolves with the answer line starting with `answer`. */
  async ask(command: string, answer: string, ms: number): Promise<string> {
    const reply = this.untilLine(
      (line) => line.startsWith(`${answer} `) || line === answer,
      ms,
      `answer to ${command}`,
    );
    this.child.stdin!.write(`${command}\n`);
    return reply;
  }

  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    this.child.kill(signal);
  }
}
