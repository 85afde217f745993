/**
 * Ordivon Host: a durable supervisor for agent work. The package root exports the library API;
 * the `ordivon` CLI lives in scripts/.
 */
export {
  createSupervisor,
  Supervisor,
  type SupervisorOptions,
  type TaskView,
  type SendOptions,
  type BootSummary,
  type CheckpointStats,
} from './actors/supervisor.js';
export type { ProgressListener, RecoveryProgress } from './recovery/index.js';
export { HostError, type HostErrorCode, type Finding } from './actors/errors.js';
export { CodedError, isCodedError, zodIssue, type ErrorData, type Issue } from './base/index.js';
export type { SendResult, Committed, Attachments } from './actors/task-actor.js';
export type { EffectRunner, TaskHandle } from './actors/effects.js';
export { TaskSpec, type TaskSpecInput } from './objects/index.js';
export { EventInput, type EventInputIn } from './actors/event-input.js';
export { systemClock, manualClock, realTimer, type Clock, type ManualClock } from './actors/clock.js';
export { OperatorRequestInput } from './actors/operator-requests.js';
export { taskRequests, TaskRequestView } from './actors/task-requests.js';
export { rebuildAll, type RecoveryReport } from './recovery/index.js';
export {
  taskMachine,
  supervisorMachine,
  TASK_MACHINE_VERSION,
  EXTERNAL_EVENT_TYPES,
  TASK_EVENT_TYPES,
  taskFrontier,
  stateName,
  type TaskContext,
  type TaskEvent,
  type FrontierWork,
} from './machines/index.js';
export { EventStore, StoreError, type StoreErrorCode } from './store/index.js';
export { openHost, type Host, type HostOptions } from './actors/host.js';
export {
  HarnessConfig,
  HostConfig,
  ApprovalPolicy,
  DEFAULT_APPROVALS,
  parseHostConfig,
} from './actors/harness-config.js';
export {
  createHostEffects,
  clientRequestId,
  type HarnessFactory,
  type HostEffectsOptions,
} from './actors/host-effects.js';
export type { EffectAdapter, EffectTarget } from './actors/effect-actions.js';
export {
  taskRuns,
  taskRejections,
  finalTextKind,
  type TaskRun,
  type TaskRejection,
  type RunSource,
  type FinalTextKind,
} from './actors/task-runs.js';
export { taskProvenance, TaskContextView, RefusalCause, type TaskRefusal } from './actors/task-contexts.js';
export { loadWorkload, type Workload } from './workloads/workload.js';
