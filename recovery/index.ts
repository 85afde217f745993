export { RECOVERY_FINDING_CODES, type RecoveryFindingCode, type Finding } from './errors.js';
export {
  rebuildAll,
  rebuildTask,
  verifyStore,
  headWeights,
  headTotals,
  restoreTaskSnapshot,
  sortById,
  type RebuiltTask,
  type RecoveryReport,
  type RebuildOptions,
  type HeadWeight,
} from './rebuild.js';
export {
  rebuildParallel,
  recoverFromCheckpointsParallel,
  type ParallelOptions,
  type ParallelReport,
} from './parallel.js';
export { idleCores, type IdleProbe } from './idle-cores.js';
export { recoverFromCheckpoints, type CheckpointRecoveryReport } from './checkpoint.js';
export {
  recoverForBoot,
  verifyFull,
  verifyTails,
  checkpointLiveTasks,
  committedCheckpoint,
  commitCheckpoints,
  CheckpointLedger,
  type RecoveryMode,
  type BootRecoveryOptions,
  type BootRecoveryReport,
  type CheckpointBatch,
  type LiveTask,
} from './boot.js';
export {
  Checkpoint,
  safeParseCheckpoint,
  readCheckpoints,
  writeCheckpoints,
  clearCheckpoints,
  type CheckpointInput,
} from './checkpoint-store.js';
export {
  RecoveryVerifier,
  type VerifiedTask,
  type ReplayStart,
  type VerifierOptions,
  type OfferedCheckpoint,
  type StartCounts,
} from './verifier.js';
export { machineCodeHash } from './machine-code.js';
export { offeredCheckpoints } from './offered-checkpoints.js';
export { identityFindings, identityFinding } from './identity-findings.js';
export { headFinding } from './head-finding.js';
export { lmdbVerifySource, type VerifySource, type RawEvent } from './source.js';
export { eventDigest, fastDigestOf, canonicalEventJson, jsonEqual } from './digest.js';
export {
  ProgressMeter,
  progressSum,
  type ProgressListener,
  type ProgressCount,
  type RecoveryProgress,
} from './progress.js';
export { RecoveryWorkerInput, RecoveryWorkerMessage, WireTask, WireFinding } from './protocol.js';
export { machineEventOf, dataOf } from '../objects/index.js';
