// World W1's provider: a separate server process with its own durable records (three operations
// shaped like real provider APIs, fault switches), the client side that starts and steers it, a
// read-only reader of its records file, and its configuration of the generic HTTP adapter. The
// server itself is `server.js`, run as a process.
export {
  startProvider,
  type ProviderProcess,
  type ProviderExit,
  type StartProviderOptions,
} from './provider-process.js';
export { setProviderFaults, releaseHeld, providerRecords, putTarget } from './control.js';
export { readProviderRecords, performCounts, RECORDS_FILE } from './provider-db.js';
export { PROVIDER_CODES, ProviderError, type ProviderCode } from './provider-error.js';
export {
  Operation,
  OperationBody,
  Receipt,
  Target,
  FaultRequest,
  FaultState,
  Capabilities,
  Discovery,
  ProviderRecord,
  ErrorAnswer,
  UrlLine,
} from './provider-schema.js';
export { providerAdapterConfig, providerEffectAdapter, type ProviderAdapterOptions } from './adapter-config.js';
