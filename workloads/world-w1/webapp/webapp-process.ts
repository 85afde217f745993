import { fileURLToPath } from 'node:url';
import type { ServerExit } from '../../shared/server-child.js';
import { DbServerHandle, type DbServerOptions, type DbServerProcess } from '../../shared/server-process.js';
import { WebappError } from './webapp-error.js';
import { PortLine, type FaultMode } from './webapp-schema.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));

/** How to start (or restart) a web-app server: its file, its identity, the fault switch at start (`faultTimes`: submits that hit it). */
export interface StartWebappOptions extends DbServerOptions<FaultMode> {
  /** What every page states as `site-identity` (the `--identity` flag; default `webapp-1`). */
  identity?: string;
  /** For `delay-confirmation`: how long each confirmation is held back (default 60000). */
  delayMs?: number;
}

/** How a server process ended. */
export type WebappExit = ServerExit;

/**
 * A web-app server process and its database file. `restart` starts the new process with the
 * identity it is given (default: the one it started with); it rejects `webapp_start_failed` if the
 * new process cannot start. `kill` is SIGKILL: nothing closed, every commit kept by the WAL.
 */
export interface WebappProcess extends DbServerProcess<StartWebappOptions> {
  kill(): Promise<WebappExit>;
}

class WebappHandle extends DbServerHandle<StartWebappOptions> implements WebappProcess {
  private identity = 'webapp-1';

  protected flags(port: number, next: Omit<StartWebappOptions, 'db'> = {}) {
    const { fault, faultTimes, delayMs } = next;
    const identity = next.identity ?? this.identity;
    return { db: this.db, port, identity, fault, 'fault-times': faultTimes, 'delay-ms': delayMs };
  }

  static start(options: StartWebappOptions): Promise<WebappHandle> {
    const { db } = options;
    const startFailed = (why: string) => new WebappError('webapp_start_failed', `web app on ${db}: ${why}`);
    const handle = new WebappHandle(db, { script: SERVER, line: PortLine, startFailed });
    handle.identity = options.identity ?? handle.identity;
    return handle.begin(options);
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
