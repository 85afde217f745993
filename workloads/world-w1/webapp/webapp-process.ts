import { fileURLToPath } from 'node:url';
import type { ServerExit } from '../../shared/server-child.js';
import { ServerHandle, type ServerProcess } from '../../shared/server-process.js';
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

/** A web-app server process and its database file, which outlives every process started on it. */
export interface WebappProcess extends ServerProcess {
  readonly db: string;
  /**
   * Stops the current process (if it still runs) and starts a new one on the same file and port,
   * with the identity and fault switch given here (identity default: the one it started with;
   * fault default `none`). Rejects `webapp_start_failed` if the new process cannot start.
   */
  restart(options?: Omit<StartWebappOptions, 'db'>): Promise<void>;
}

class WebappHandle extends ServerHandle<PortLine, Omit<StartWebappOptions, 'db'>> implements WebappProcess {
  constructor(
    readonly db: string,
    private readonly identity: string,
  ) {
    super({
      script: SERVER,
      line: PortLine,
      startFailed: (why) => new WebappError('webapp_start_failed', `web app on ${db}: ${why}`),
    });
  }

  protected flags(port: number, next: Omit<StartWebappOptions, 'db'> = {}) {
    const { fault, faultTimes, delayMs } = next;
    const identity = next.identity ?? this.identity;
    return { db: this.db, port, identity, fault, 'fault-times': faultTimes, 'delay-ms': delayMs };
  }

  protected portOf(line: PortLine): number {
    return line.port;
  }

  static start(options: StartWebappOptions): Promise<WebappHandle> {
    return new WebappHandle(options.db, options.identity ?? 'webapp-1').begin(options);
  }
}

/**
 * Starts `server.js` as a child process on `options.db` (a free port on 127.0.0.1) and resolves
 * once it printed its port line. Rejects `webapp_start_failed` (with the server's stderr) if it
 * exits first or prints something else. The child is killed if this process exits (execa's
 * `cleanup`).
 */
export function startWebapp(options: StartWebappOptions): Promise<WebappProcess> {
  return WebappHandle.start(options);
}
