/**
 * Ordivon Host: a durable supervisor for agent work. The package root is what an embedder needs:
 * a supervisor or a whole Host on a state root, the configuration and Task spec schemas, the
 * events callers send and the answers they get, the errors, the clocks, the Effect adapter
 * interface and the helpers that read a Task's history. The statecharts themselves are on the
 * `ordivon/machines` subpath; docs/api.md says why each name is public. The `ordivon` CLI lives
 * in cli/
 *
 * @packageDocumentation
 */
export {
  createSupervisor,
  Supervisor,
  type SupervisorOptions,
  type ExternalEvent,
  type SendOptions,
  type TaskView,
  type TaskReading,
  type BootSummary,
  type CheckpointStats,
  type StageDrain,
} from './kernel/index.js';
export { NO_STATE } from './kernel/index.js';
export type {
  SendResult,
  SendKind,
  SendAdmitted,
  SendRetained,
  SendDuplicate,
  SendRefused,
  SendAt,
  RejectionCode,
  Committed,
  RemoteInterest,
  SubscribeOptions,
} from './kernel/index.js';
export type { ProgressListener, RecoveryMode, RecoveryProgress } from './recovery/index.js';
export type { ClusterOptions, LeaseEvent, QueuedRun, RunLimits } from './kernel/index.js';
export type { ArtifactContracts } from './objects/index.js';
export type { EventRecord } from './store/index.js';
export type { FrontierWork, EventOrigin, SupervisorFailure } from './machines/index.js';
export type {
  TaskMachineContext,
  TaskContext,
  Rejection,
  RejectionReason,
  DispatchStatus,
  EffectState,
  EffectStatus,
  RequestState,
  RequestStatus,
} from './machines/task-context.js';
export { openHost, type Host, type HostOptions } from './host/index.js';
export { HarnessConfig, HostConfig, ApprovalPolicy, DEFAULT_APPROVALS, parseHostConfig } from './frontier/index.js';
export type { HarnessFactory } from './frontier/index.js';
export type { EffectAdapter, EffectEvidenceFile, EffectObservation, EffectTarget } from './frontier/index.js';
export { ReceiptWithEvidence, withEvidence } from './frontier/index.js';
export {
  httpEffectAdapter,
  HttpCapabilities,
  HttpEffectError,
  HTTP_EFFECT_CODES,
  httpNotPerformed,
  type HttpEffectAdapter,
  type HttpEffectAdapterConfig,
  type HttpEffectObservation,
  type HttpEffectCode,
  type HttpOperation,
  type HttpCall,
  type KeyIdempotency,
  type ProviderIdIdempotency,
  type NoIdempotency,
  browserEffectAdapter,
  BrowserEffectError,
  BROWSER_EFFECT_CODES,
  type BrowserEffectAdapter,
  type BrowserEffectConfig,
  type BrowserReceipt,
  type BrowserEffectCode,
  type BrowserObservation,
  gitEffectAdapter,
  GitEffectError,
  GIT_EFFECT_CODES,
  gitNotPerformed,
  type GitEffectAdapter,
  type GitEffectAdapterConfig,
  type GitEffectObservation,
  type GitEffectCode,
  type GitPublishReceipt,
  type GitWorkspaceRequest,
} from './adapters/index.js';
export { TaskSpec, type TaskSpecInput } from './objects/index.js';
export { EventInput, type EventInputIn } from './kernel/index.js';
export { OperatorRequestInput } from './kernel/index.js';
export {
  HostError,
  HOST_ERROR_CODES,
  type HostErrorCode,
  type HostErrorOptions,
  type Finding,
} from './kernel/index.js';
export { CodedError, isCodedError, type CodedErrorOptions, type ErrorData } from './base/index.js';
export { systemClock, manualClock, type Clock, type ManualClock } from './kernel/index.js';
export {
  taskRuns,
  taskRejections,
  type TaskRun,
  type TaskRejection,
  type RunSource,
  type FinalTextKind,
} from './views/index.js';
export { taskProvenance, TaskContextView, RefusalCause, type TaskRefusal } from './views/index.js';
export { taskRequests, TaskRequestView, type RequestSource } from './views/index.js';
