export {
  createSupervisor,
  Supervisor,
  type SupervisorOptions,
  type TaskView,
  type SendOptions,
  type BootSummary,
  type CheckpointStats,
} from './supervisor.js';
export { FrontierScheduler, type FrontierSchedulerOptions } from './frontier-scheduler.js';
export { CheckpointScheduler, type CheckpointSchedulerOptions } from './checkpoint-scheduler.js';
export { TaskActor, type SendResult, type Committed, type Attachments, type TaskSnapshot } from './task-actor.js';
export {
  HostError,
  HOST_ERROR_CODES,
  isHostErrorCode,
  hostCodeOf,
  hostErrorOf,
  type HostErrorCode,
  type HostErrorOptions,
  type Finding,
} from './errors.js';
export { parseTaskSpec } from './new-task.js';
export {
  HarnessConfig,
  HostConfig,
  ApprovalPolicy,
  DEFAULT_APPROVALS,
  parseHostConfig,
  assertEnvFrom,
} from './harness-config.js';
export { EventInput, type EventInputIn } from './event-input.js';
export { systemClock, manualClock, realTimer, type Clock, type ManualClock } from './clock.js';
export type { EffectRunner, TaskHandle } from './effects.js';
export {
  taskRuns,
  taskRejections,
  finalTextKind,
  type TaskRun,
  type TaskRejection,
  type RunSource,
  type FinalTextKind,
} from './task-runs.js';
export { taskProvenance, TaskContextView, RefusalCause, type TaskRefusal } from './task-contexts.js';
export { OperatorRequestInput } from './operator-requests.js';
export { RequestDeadlines } from './request-deadlines.js';
export { taskRequests, TaskRequestView, AnswerView, type RequestSource } from './task-requests.js';
