export {
  EventStore,
  prepareObject,
  type OpenOptions,
  type AppendInput,
  type AppendResult,
  type NewObject,
  type PreparedObject,
  type ObjectKinds,
} from './event-store.js';
export {
  canonicalJson,
  canonicalJsonFast,
  digestOf,
  sha256,
  sha256Text,
  sha256Bytes,
  DIGEST_PATTERN,
} from './canonical.js';
export { StoreError, type StoreErrorCode } from './errors.js';
export { objectMatches, objectValue, type RawObject } from './object-bytes.js';
export { checkDataFileTail, type TailCheck } from './lmdb-tail.js';
export {
  EventRecord,
  safeParseEventRecord,
  EventDisposition,
  Head,
  Projection,
  StoredObject,
  IndexClaim,
  IndexKind,
  TaskId,
  Digest,
  StreamWarning,
  FORMAT_NAME,
  FORMAT_VERSION,
} from './records.js';
export { resolveStateRoot, checkFormat } from './state-root.js';
export { acquireLock, lockHolder, type LockInfo } from './state-lock.js';
export { enterEnvGate } from './env-gate.js';
