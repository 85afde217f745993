// The kernel: one Task actor per Task and its admission, the Supervisor and its frontier and
// checkpoint schedulers, cluster membership. Imports neither the Runtime nor the drivers' code
// beyond the gaps .dependency-cruiser.cjs names.
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
} from './supervisor.js';
export { TaskActor, type SendResult, type Committed, type Attachments, type TaskSnapshot } from './task-actor.js';
export type { RemoteInterest, SubscribeOptions } from './commit-listeners.js';
export {
  sendAdmitted,
  sendRetained,
  sendDuplicate,
  sendRefused,
  taskNotFound,
  taskElsewhere,
  NO_STATE,
  type SendKind,
  type SendAdmitted,
  type SendRetained,
  type SendDuplicate,
  type SendRefused,
  type RejectionCode,
  type SendAt,
} from './send-result.js';
export { FrontierScheduler, owedStart, type FrontierSchedulerOptions } from './frontier-scheduler.js';
export { RunLimits, runLine, type QueuedRun, type RunSlotTask } from './run-queue.js';
export { CheckpointScheduler, type CheckpointSchedulerOptions } from './checkpoint-scheduler.js';
export type { FrontierRunner, TaskHandle } from './frontier-runner.js';
export {
  HostError,
  HOST_ERROR_CODES,
  hostErrorOf,
  type HostErrorCode,
  type HostErrorOptions,
  type Finding,
} from './errors.js';
export { systemClock, manualClock, realTimer, type Clock, type ManualClock } from './clock.js';
export { waitForTask } from './wait-for-state.js';
export { EventInput, type EventInputIn } from './event-input.js';
export { parseTaskSpec, specDifferences } from './new-task.js';
export { pinFrozenTests } from './frozen-tests.js';
export { OperatorRequestInput, openOperatorRequest } from './requests/operator-requests.js';
export { openDecisionRequest, REVOKED_WITH_CONTEXT, type RequestOpener } from './requests/decision-requests.js';
export { RequestDeadlines } from './requests/request-deadlines.js';
export { revocationOf, type JournalEvent } from './requests/request-revocation.js';
export { assignedStage } from './stages.js';
export { contextOf } from './compiled-contexts.js';
export {
  compileReadSet,
  currentGoal,
  readSource,
  workspacesOf,
  observationValues,
  observedDigest,
  observationItemId,
  ABSENT,
  type SourceRead,
  type ObservationValues,
  type ObservationReader,
  type ObservationLocation,
  type CandidateObservation,
} from '../readsets/index.js';
export { defaultHostId, type ClusterOptions, type LeaseEvent } from './cluster/cluster.js';
