import { fileURLToPath } from 'node:url';
import { spawnServerChild, type ServerExit } from '../../shared/server-child.js';
import { WebappError } from './webapp-error.js';
import { PortLine, type FaultMode } from './webapp-schema.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));

/** How to start (or restart) a web-app server. */
export interface StartWebappOptions {
  /** The database file (created and seeded if absent; reopened as it is if present). */
  db: string;
  /** What every page states as `site-identity` (the `--identity` flag; default `webapp-1`). */
  identity?: string;
  /** The fault switch at start (default `none`): the process's own, never stored in the file. */
  fault?: FaultMode;
  /** How many submits hit `fault` before it switches itself off (default: all of them). */
  faultTimes?: number;
  /** For `delay-confirmation`: how long each confirmation is held back (default 60000). */
  delayMs?: number;
}

/** How a server process ended. */
export type WebappExit = ServerExit;

interface Running {
  port: number;
  pid: number;
  exited: Promise<WebappExit>;
  kill: () => void;
}

/** A web-app server process and its database file, which outlives every process started on it. */
export interface WebappProcess {
  /** `http://127.0.0.1:PORT`; the same after `restart()`, which listens on the same port again. */
  readonly url: string;
  readonly pid: number;
  readonly db: string;
  /** Settles when the current process ends, for whatever reason (never rejects). */
  readonly exited: Promise<WebappExit>;
  /** SIGTERM (the server closes its database and exits 0), then waits for the exit; a no-op on a dead process. */
  stop(): Promise<WebappExit>;
  /**
   * Stops the current process (if it still runs) and starts a new one on the same file and port,
   * with the identity and fault switch given here (identity default: the one it started with;
   * fault default `none`). Rejects `webapp_start_failed` if the new process cannot start.
   */
  restart(options?: Omit<StartWebappOptions, 'db'>): Promise<void>;
}

/**
 * Starts `server.js` as a child process on `options.db` (a free port on 127.0.0.1) and resolves
 * once it printed its port line. Rejects `webapp_start_failed` (with the server's stderr) if it
 * exits first or prints something else. The child is killed if this process exits (execa's
 * `cleanup`).
 */
export async function startWebapp(options: StartWebappOptions): Promise<WebappProcess> {
  const identity = options.identity ?? 'webapp-1';
  let running = await spawnServer(options.db, 0, { ...options, identity });
  return {
    get url() {
      return `http://127.0.0.1:${running.port}`;
    },
    get pid() {
      return running.pid;
    },
    get exited() {
      return running.exited;
    },
    db: options.db,
    async stop() {
      running.kill();
      return running.exited;
    },
    async restart(next = {}) {
      running.kill();
      await running.exited;
      running = await spawnServer(options.db, running.port, { identity, ...next });
    },
  };
}

async function spawnServer(
  db: string,
  port: number,
  options: Omit<StartWebappOptions, 'db'> & { identity: string },
): Promise<Running> {
  const args = [SERVER, '--db', db, '--port', String(port), '--identity', options.identity];
  if (options.fault !== undefined) args.push('--fault', options.fault);
  if (options.faultTimes !== undefined) args.push('--fault-times', String(options.faultTimes));
  if (options.delayMs !== undefined) args.push('--delay-ms', String(options.delayMs));
  const child = await spawnServerChild(
    args,
    PortLine,
    (why) => new WebappError('webapp_start_failed', `web app on ${db}: ${why}`),
  );
  return { port: child.line.port, pid: child.pid, exited: child.exited, kill: () => child.kill('SIGTERM') };
}
