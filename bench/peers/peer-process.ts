// One system's driver process in the side-by-side bench (peers.bench.ts): spawned with its
// config, every stdout line parsed as a DriverLine (driver-protocol.ts), waited on by kind.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { DriverLine } from './driver-protocol.js';

type Kind = DriverLine['t'];
type LineOf<K extends Kind> = Extract<DriverLine, { t: K }>;

/** The command that runs a driver: a program and its arguments before the config. */
export interface DriverCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

export class PeerProcess {
  readonly child: ChildProcess;
  readonly lines: Array<DriverLine & { at: number }> = [];
  readonly stderr: string[] = [];
  #waiters: Array<{ t: Kind; resolve: (line: DriverLine) => void; reject: (error: Error) => void }> = [];
  #ended: Error | undefined;

  constructor(
    readonly name: string,
    command: DriverCommand,
    config: unknown,
  ) {
    this.child = spawn(command.command, [...command.args, JSON.stringify(config)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...command.env },
    });
    createInterface({ input: this.child.stdout! }).on('line', (text) => this.#take(text));
    createInterface({ input: this.child.stderr! }).on('line', (text) => {
      this.stderr.push(text);
      if (this.stderr.length > 200) this.stderr.shift();
    });
    this.child.on('exit', (code, signal) => {
      this.#fail(new Error(`${name}: the driver exited (${signal ?? `code ${code}`}) ${this.#tail()}`));
    });
  }

  #tail(): string {
    return this.stderr.length > 0 ? `; its last stderr lines:\n${this.stderr.slice(-15).join('\n')}` : '';
  }

  #take(text: string): void {
    let line: DriverLine;
    try {
      line = DriverLine.parse(JSON.parse(text));
    } catch (error) {
      this.#fail(new Error(`${this.name}: an unreadable line on stdout: ${text.slice(0, 300)} (${String(error)})`));
      return;
    }
    this.lines.push({ ...line, at: performance.now() });
    if (line.t === 'error') {
      this.#fail(new Error(`${this.name}: the driver failed: ${line.message}`));
      return;
    }
    const waiting = this.#waiters.filter((w) => w.t === line.t);
    this.#waiters = this.#waiters.filter((w) => w.t !== line.t);
    for (const w of waiting) w.resolve(line);
  }

  #fail(error: Error): void {
    this.#ended ??= error;
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const w of waiting) w.reject(error);
  }

  /** The next line of kind `t` (or one already seen, when `seen`), with the time it arrived. */
  next<K extends Kind>(t: K, timeoutMs: number): Promise<LineOf<K> & { at: number }> {
    const had = this.lines.find((l) => l.t === t);
    if (had) return Promise.resolve(had as LineOf<K> & { at: number });
    if (this.#ended) return Promise.reject(this.#ended);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.name}: no ${t} line within ${timeoutMs} ms${this.#tail()}`)),
        timeoutMs,
      );
      this.#waiters.push({
        t,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.lines.findLast((l) => l.t === t) as LineOf<K> & { at: number });
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  }

  send(line: unknown): void {
    this.child.stdin!.write(`${JSON.stringify(line)}\n`);
  }

  /** Closes stdin (the driver stops what it started and exits) and waits for the exit. */
  async finish(timeoutMs = 60_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
  }

  /** SIGKILL, and resolves once the process is gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/** Kills `pid` with SIGKILL if it lives (a server a killed driver left running). */
export function killPid(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Whether `pid` is a live process. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `pid` and every descendant of it, from /proc. */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = parents.get(ppid) ?? [];
      list.push(Number(entry));
      parents.set(ppid, list);
    } catch {
      // Gone meanwhile.
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of parents.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

/** Resident bytes of the given processes and all their descendants, each counted once. */
export function residentBytes(pids: number[]): number {
  const seen = new Set<number>();
  for (const pid of pids) for (const p of processTree(pid)) seen.add(p);
  let total = 0;
  for (const pid of seen) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const match = /VmRSS:\s+(\d+) kB/.exec(status);
      if (match) total += Number(match[1]) * 1024;
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}
