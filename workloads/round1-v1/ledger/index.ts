// The Round 1 world's ledger backend: a separate server process with its own durable,
// non-idempotent append-only ledger file, and the client side (process control, the Effect
// adapter, a read-only reader of the file). The server itself is `server.js`, run as a process.
export { ledgerAdapter, ledgerEntries, setLedgerFault, readLedgerFile, type LedgerAdapter } from './client.js';
export { ledgerEffectAdapter, ledgerNotPerformed } from './effect-adapter.js';
export { startLedger, type LedgerExit, type LedgerProcess, type StartLedgerOptions } from './ledger-process.js';
export { LEDGER_CODES, LedgerError, type LedgerCode } from './ledger-error.js';
export {
  LedgerEntry,
  LedgerInput,
  FaultMode,
  FaultState,
  ErrorAnswer,
  PortLine,
  PerformRequest,
} from './ledger-schema.js';
