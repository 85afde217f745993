import { fileURLToPath } from 'node:url';
import type { ServerExit } from '../../shared/server-child.js';
import { ServerHandle, type ServerProcess } from '../../shared/server-process.js';
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

/** A ledger server process and its database file, which outlives every process started on it. */
export interface LedgerProcess extends ServerProcess {
  readonly db: string;
  /**
   * Stops the current process (if it still runs) and starts a new one on the same file and port,
   * with the fault switch given here (default `none`: a fault is an incident, not configuration).
   * Rejects `ledger_start_failed` if the new process cannot open the file or take the port.
   */
  restart(options?: Omit<StartLedgerOptions, 'db'>): Promise<void>;
}

class LedgerHandle extends ServerHandle<PortLine, Omit<StartLedgerOptions, 'db'>> implements LedgerProcess {
  constructor(readonly db: string) {
    super({
      script: SERVER,
      line: PortLine,
      startFailed: (why) => new LedgerError('ledger_start_failed', `ledger server on ${db}: ${why}`),
    });
  }

  protected flags(port: number, options: Omit<StartLedgerOptions, 'db'> = {}) {
    return { db: this.db, port, fault: options.fault, 'fault-times': options.faultTimes };
  }

  protected portOf(line: PortLine): number {
    return line.port;
  }

  static start(options: StartLedgerOptions): Promise<LedgerHandle> {
    return new LedgerHandle(options.db).begin(options);
  }
}

/**
 * Starts `server.js` as a child process on `options.db` (a free port on 127.0.0.1) and resolves
 * once it printed its port line. Rejects `ledger_start_failed` (with the server's stderr) if it
 * exits first or prints something else. The child is killed if this process exits (execa's
 * `cleanup`), so a test that fails midway leaves no server behind.
 */
export function startLedger(options: StartLedgerOptions): Promise<LedgerProcess> {
  return LedgerHandle.start(options);
}
