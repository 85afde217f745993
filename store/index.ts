export { EventStore, type OpenOptions, type AppendInput, type AppendResult, type NewObject, type ObjectKinds } from './event-store.js';
export { canonicalJson, digestOf, sha256, DIGEST_PATTERN } from './canonical.js';
export { StoreError, type StoreErrorCode } from './errors.js';
export {
  EventRecord,
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
export { resolveStateRoot, checkFormat, acquireLock, lockHolder, type LockInfo } from './state-root.js';
