export { taskMachine, TASK_MACHINE_VERSION, type TaskMachine, type TaskSnapshot } from './task-machine.js';
export { missingEvidence } from './rejection-detail.js';
export {
  EMPTY_TASK_CONTEXT,
  REJECTION_REASONS,
  type TaskMachineContext,
  type TaskContext,
  type Rejection,
  type RejectionReason,
  type DispatchStatus,
  type BranchState,
  type BranchChild,
} from './task-context.js';
export {
  TASK_EVENTS,
  TaskEvent,
  TASK_EVENT_TYPES,
  EXTERNAL_EVENT_TYPES,
  TASK_EVENT_REFS,
  TASK_EVENT_CLAIMS,
  refsOf,
  claimsOf,
  type TaskEventType,
  type ExternalEventType,
} from './task-events.js';
export {
  EventOrigin,
  Envelope,
  StaleSource,
  RevokedBy,
  ARTIFACT_REFUSAL_CODES,
  ArtifactRefusalCode,
  ArtifactRefusal,
  StoredArtifactRefusal,
  legacyRefusalCode,
  VerificationCause,
  type RefKind,
  type ClaimKind,
} from './event-fields.js';
export { ADMISSION_FACTS, type AdmissionFact, type TaskEventDefinition } from './event-definition.js';
export {
  taskFrontier,
  snapshotView,
  stateName,
  classifyTransition,
  FINAL_TASK_STATES,
  RESTING_TASK_STATES,
  TASK_STATE_NAMES,
  isTaskState,
  type TaskStateName,
  type FrontierWork,
  type Disposition,
} from './task-frontier.js';
export type { TaskTag } from './task-tags.js';
export {
  supervisorMachine,
  type BootSummary,
  type RecoveryProgress,
  type SupervisorContext,
  type SupervisorFailure,
} from './supervisor-machine.js';
export { taskGraph, toMermaid, toDot, type TaskGraph, type GraphState, type GraphTransition } from './task-graph.js';
