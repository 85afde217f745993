export {
  taskMachine,
  TASK_MACHINE_VERSION,
  missingEvidence,
  type TaskMachine,
  type TaskSnapshot,
} from './task-machine.js';
export {
  EMPTY_TASK_CONTEXT,
  type TaskContext,
  type Rejection,
  type RejectionReason,
  type DispatchStatus,
} from './task-context.js';
export {
  EXTERNAL_EVENT_TYPES,
  TASK_EVENT_TYPES,
  type TaskEvent,
  type TaskEventType,
  type EventOrigin,
  type Envelope,
} from './task-events.js';
export {
  taskFrontier,
  stateName,
  classifyTransition,
  FINAL_TASK_STATES,
  type FrontierWork,
  type Disposition,
} from './task-frontier.js';
export {
  supervisorMachine,
  type BootSummary,
  type RecoveryProgress,
  type SupervisorContext,
  type SupervisorFailure,
} from './supervisor-machine.js';
export { taskGraph, toMermaid, toDot, type TaskGraph, type GraphState, type GraphTransition } from './task-graph.js';
