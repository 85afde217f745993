// The Runtime: jobs, process trees, workspaces, acceptance verification. Owns no Task meaning.
export { createRuntime, Runtime } from './runtime.js';
export type { DispatchResult } from './admission.js';
export { RuntimeOptions, type RuntimeOptionsIn, type Clock } from './runtime-options.js';
export {
  DispatchInput,
  VerifyInput,
  RunSpec,
  CommandRun,
  HarnessRun,
  ClientRequestId,
  RelativePath,
  type DispatchInputIn,
  type VerifyInputIn,
} from './dispatch-input.js';
export {
  JobRecord,
  JobId,
  JobState,
  StoredRun,
  StopReason,
  ExecutorIdentity,
  OutputEvidence,
  FileChange,
  FilesEvidence,
  Verification,
  Digest,
  TERMINAL_STATES,
  RUNTIME_FORMAT,
  isTerminal,
} from './job-record.js';
export { JobStore } from './job-store.js';
export { currentExecutor, executorAlive } from './executor-identity.js';
export { processAlive } from '../os/index.js';
export type { HarnessExecutor } from './harness-job.js';
export type { RecoveryReport } from './recovery.js';
export {
  sharedJobRegistry,
  registryError,
  type JobRegistry,
  type SharedJobs,
  type JobRow,
  type RegistryJob,
} from './job-registry.js';
export { ConfinementMode, ConfinementLimits, Confiner, assertConfinement, sandboxLimits } from './confinement.js';
export { RuntimeError, isRuntimeError, confineError, type RuntimeErrorCode } from './errors.js';
export { createWorkspace, workspacePath, WorkspaceRequest } from './workspace.js';
export { mergeWorkspaces, MergeSources } from './merge-workspaces.js';
export { sourceDigest, SOURCE_DIGEST_HEADER, type SourceDigestOptions } from './source-digest.js';
export { JUNK_DIRS, compilePattern } from './tree-walk.js';
export {
  resolveInside,
  readArtifact,
  type ConfineCode,
  type ConfineResult,
  type ReadArtifact,
} from '../drivers/confine.js';
