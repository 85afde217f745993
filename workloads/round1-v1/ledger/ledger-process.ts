import { fileURLToPath } from 'node:url';
import { spawnServerChild, type ServerExit } from '../../shared/server-child.js';
import { LedgerError } from './ledger-error.js';
import { PortLine, type FaultMode } from './ledger-schema.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));

/** How to start a ledger server. */
export interface StartLedgerOptions {
  /** The ledger's database file (created if absent; reopened as it is if present). */
  db: string;
  /** The fault switch at start (default `none`): the process's own, never stored in the file. */
  fault?: FaultMode;
  /** How many performs hit `fault` before it switches itself off (default: all of them). */
  faultTimes?: number;
}

/** How a server process ended. `signal: 'SIGKILL'` with no stop asked for: it killed itself. */
export type LedgerExit = ServerExit;

interface Running {
  port: number;
  pid: number;
  exited: Promise<LedgerExit>;
  kill: () => void;
}

/** A ledger server process and its database file, which outlives every process started on it. */
export interface LedgerProcess {
  /** `http://127.0.0.1:PORT`; the same after `restart()`, which listens on the same port again. */
  readonly url: string;
  readonly pid: number;
  readonly db: string;
  /** Settles when the current process ends, for whatever reason (never rejects). */
  readonly exited: Promise<LedgerExit>;
  /** SIGTERM (the server closes its database and exits 0), then waits for the exit; a no-op on a dead process. */
  stop(): Promise<LedgerExit>;
  /**
   * Stops the current process (if it still runs) and starts a new one on the same file and port,
   * with the fault switch given here (default `none`: a fault is an incident, not configuration).
   * Rejects `ledger_start_failed` if the new process cannot open the file or take the port.
   */
  restart(options?: Omit<StartLedgerOptions, 'db'>): Promise<void>;
}

/**
 * Starts `server.js` as a child process on `options.db` (a free port on 127.0.0.1) and resolves
 * once it printed its port line. Rejects `ledger_start_failed` (with the server's stderr) if it
 * exits first or prints something else. The child is killed if this process exits (execa's
 * `cleanup`), so a test that fails midway leaves no server behind.
 */
export async function startLedger(options: StartLedgerOptions): Promise<LedgerProcess> {
  let running = await spawnServer(options.db, 0, options);
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
      running = await spawnServer(options.db, running.port, next);
    },
  };
}

async function spawnServer(db: string, port: number, options: Omit<StartLedgerOptions, 'db'>): Promise<Running> {
  const args = [SERVER, '--db', db, '--port', String(port)];
  if (options.fault !== undefined) args.push('--fault', options.fault);
  if (options.faultTimes !== undefined) args.push('--fault-times', String(options.faultTimes));
  const child = await spawnServerChild(
    args,
    PortLine,
    (why) => new LedgerError('ledger_start_failed', `ledger server on ${db}: ${why}`),
  );
  return { port: child.line.port, pid: child.pid, exited: child.exited, kill: () => child.kill('SIGTERM') };
}
