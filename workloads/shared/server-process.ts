import type { z } from 'zod';
import { spawnServerChild, type ServerChild, type ServerExit } from './server-child.js';

/** A frozen world's server process and its records, which outlive every process started on them. */
export interface ServerProcess {
  /** `http://127.0.0.1:PORT`; the same after `restart()`, which listens on the same port again. */
  readonly url: string;
  readonly pid: number;
  /** Settles when the current process ends, for whatever reason (never rejects). */
  readonly exited: Promise<ServerExit>;
  /** SIGTERM (the server closes its records and exits 0), then waits for the exit; a no-op on a dead process. */
  stop(): Promise<ServerExit>;
}

/** A world's server script: what it prints once it listens, and its start error. */
export interface ServerScript<L> {
  /** The `server.js` file. */
  script: string;
  line: z.ZodType<L>;
  /** The world's `…_start_failed` error, `why` naming what the process printed and its stderr. */
  startFailed(why: string): Error;
}

/**
 * The one handle of the worlds' server processes (the ledger, the provider, the web app): it keeps
 * the current child (server-child.ts), stops, kills and restarts it on the same port. A world
 * subclasses it with its script, its flags (`flags`) and which port its line names.
 */
export abstract class ServerHandle<L, N> implements ServerProcess {
  #running!: ServerChild<L>;

  constructor(private readonly server: ServerScript<L>) {}

  /**
   * The flags to start the world's server with on `port` (0: a free one), by name without the
   * `--`; one that is `undefined` is left off. `next` is what the handle was started with, then
   * what `restart` was given (`undefined` for none: the world's defaults).
   */
  protected abstract flags(port: number, next: N | undefined): Record<string, string | number | undefined>;

  private spawn(port: number, next: N | undefined): Promise<ServerChild<L>> {
    const args = [this.server.script];
    for (const [flag, value] of Object.entries(this.flags(port, next)))
      if (value !== undefined) args.push(`--${flag}`, String(value));
    return spawnServerChild(args, this.server.line, this.server.startFailed);
  }

  /** The port the child's line says it listens on. */
  protected abstract portOf(line: L): number;

  /** Starts the first process; a world's `start…` awaits it before handing the handle out. */
  protected async begin(first: N): Promise<this> {
    this.#running = await this.spawn(0, first);
    return this;
  }

  /** The current process's line (what it printed once it listened). */
  protected get line(): L {
    return this.#running.line;
  }

  get url(): string {
    return `http://127.0.0.1:${this.portOf(this.#running.line)}`;
  }

  get pid(): number {
    return this.#running.pid;
  }

  get exited(): Promise<ServerExit> {
    return this.#running.exited;
  }

  async stop(): Promise<ServerExit> {
    this.#running.kill('SIGTERM');
    return this.#running.exited;
  }

  /** SIGKILL: the process ends without closing anything (the WAL keeps every commit). */
  async kill(): Promise<ServerExit> {
    this.#running.kill('SIGKILL');
    return this.#running.exited;
  }

  /**
   * Stops the current process (if it still runs) and starts a new one on the same records and
   * port, with `next` (see `spawn`). Rejects as `spawn` does if the new process cannot start.
   */
  async restart(next?: N): Promise<void> {
    const port = this.portOf(this.#running.line);
    await this.stop();
    this.#running = await this.spawn(port, next);
  }
}

/** How to start a world's server on one database file: the file, and its fault switch at start. */
export interface DbServerOptions<F extends string> {
  /** The database file (created if absent; reopened as it is if present). */
  db: string;
  /** The fault switch at start (default `none`): the process's own, never stored in the file. */
  fault?: F;
  /** How many hits of `fault` before it switches itself off (default: all of them). */
  faultTimes?: number;
}

/** A world's server process on one database file, which outlives every process started on it. */
export interface DbServerProcess<O extends { db: string }> extends ServerProcess {
  readonly db: string;
  /**
   * Stops the current process (if it still runs) and starts a new one on the same file and port,
   * with the options given here (fault default `none`: a fault is an incident, not configuration).
   * Rejects the world's `…_start_failed` if the new process cannot open the file or take the port.
   */
  restart(options?: Omit<O, 'db'>): Promise<void>;
}

/**
 * The handle of a server on one database file that prints `{"port":N}` once it listens (the
 * ledger, the web app): a world subclasses it with its flags.
 */
export abstract class DbServerHandle<O extends { db: string }>
  extends ServerHandle<{ port: number }, Omit<O, 'db'>>
  implements DbServerProcess<O>
{
  constructor(
    readonly db: string,
    server: ServerScript<{ port: number }>,
  ) {
    super(server);
  }

  protected portOf(line: { port: number }): number {
    return line.port;
  }
}
