export { EventStore, type OpenOptions, type TaskCopyIn } from './event-store.js';
export type { StoreAuthority, AuthorityCommit } from './authority.js';
export type { AppendInput, AppendResult } from './append.js';
export { prepareObject, type NewObject, type PreparedObject, type ObjectKinds } from './prepare-object.js';
export type { StoreDatabases } from './databases.js';
export {
  canonicalJson,
  canonicalJsonFast,
  digestOf,
  sha256,
  sha256Text,
  sha256Bytes,
  DIGEST_PATTERN,
} from './canonical.js';
export { StoreError, STORE_ERROR_CODES, type StoreErrorCode } from './errors.js';
export { isCommitFailure } from './commit-failure.js';
export { objectMatches, objectValue, type RawObject } from './object-bytes.js';
export { checkDataFileTail, type TailCheck } from './lmdb-tail.js';
export {
  checkLmdbPages,
  PAGE_ROLE,
  type PagesCheck,
  type PageKind,
  type PageMap,
  type PageProblem,
  type CheckPagesOptions,
} from './lmdb-pages.js';
export { checkPagesBeforeOpen, storageFinding, RESTORE_ADVICE } from './page-check.js';
export {
  EventRecord,
  safeParseEventRecord,
  safeParseHead,
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
export { resolveStateRoot, checkFormat, checkStateRoot, type StateRootOptions } from './state-root.js';
export {
  ALLOW_SHARED_ROOT_ENV,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  makePrivateDir,
  protectStateRoot,
  sharedRootAllowedByEnv,
} from './private-root.js';
export { acquireLock, lockHolder, type LockInfo } from './state-lock.js';
export { enterEnvGate } from './env-gate.js';
export { copyEnvironment } from './env-copy.js';
export { scanStreams, headIds, headRecords, streamEnd, streamIdsAfterHeads, type RawEvent } from './scan.js';
export { metaEntries, updateMeta, type MetaBatch } from './meta.js';
