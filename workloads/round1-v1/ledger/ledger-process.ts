import { fileURLToPath } from 'node:url';
import type { ServerExit } from '../../shared/server-child.js';
import { DbServerHandle, type DbServerOptions, type DbServerProcess } from '../../shared/server-process.js';
import { LedgerError } from './ledger-error.js';
import { PortLine, type FaultMode } from './ledger-schema.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));

/** How to start a ledger server: its database file and the fault switch at start (`faultTimes`: performs that hit it). */
export type StartLedgerOptions = DbServerOptions<FaultMode>;

/** How a server process ended. `signal: 'SIGKILL'` with no stop asked for: it killed itself. */
export type LedgerExit = ServerExit;

/** A ledger server process and its database file; `restart` rejects `ledger_start_failed` if it cannot start. */
export type LedgerProcess = DbServerProcess<StartLedgerOptions>;

class LedgerHandle extends DbServerHandle<StartLedgerOptions> {
  protected flags(port: number, options: Omit<StartLedgerOptions, 'db'> = {}) {
    return { db: this.db, port, fault: options.fault, 'fault-times': options.faultTimes };
  }

  static start(options: StartLedgerOptions): Promise<LedgerHandle> {
    const { db } = options;
    const startFailed = (why: string) => new LedgerError('ledger_start_failed', `ledger server on ${db}: ${why}`);
    return new LedgerHandle(db, { script: SERVER, line: PortLine, startFailed }).begin(options);
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
