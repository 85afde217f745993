/**
 * `ordivon/machines`: the Task and Supervisor statecharts as values, for tools that work on the
 * machine definition itself (XState's inspector and `xstate/graph`, a simulation with
 * `createActor(taskMachine)`, a check of a stored snapshot's `TASK_MACHINE_VERSION`), and the
 * helpers that read a Task snapshot's state and frontier. An embedder of the Host needs none of
 * it; the package root is the API (docs/api.md).
 *
 * @packageDocumentation
 */
export { taskMachine, TASK_MACHINE_VERSION, type TaskMachine, type TaskSnapshot } from './task-machine.js';
export {
  supervisorMachine,
  type SupervisorContext,
  type SupervisorFailure,
  type BootSummary,
  type RecoveryProgress,
} from './supervisor-machine.js';
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
} from './task-context.js';
export {
  TaskEvent,
  TASK_EVENT_TYPES,
  EXTERNAL_EVENT_TYPES,
  type TaskEventType,
  type ExternalEventType,
} from './task-events.js';
export {
  taskFrontier,
  stateName,
  isTaskState,
  TASK_STATE_NAMES,
  type TaskStateName,
  type FrontierWork,
} from './task-frontier.js';
export type { TaskTag } from './task-tags.js';
export { taskGraph, type TaskGraph, type GraphState, type GraphTransition } from './task-graph.js';
