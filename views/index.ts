// Read models of a Task's history, as the CLI, the service and the workloads show it. Light:
// schemas and pure functions over events and objects, no store.
export {
  taskRuns,
  taskRejections,
  finalTextKind,
  LatestRejection,
  type TaskRun,
  type TaskRejection,
  type RunSource,
  type FinalTextKind,
} from './task-runs.js';
export { taskProvenance, TaskContextView, RefusalCause, type TaskRefusal } from './task-contexts.js';
export {
  taskRequests,
  taskGrants,
  TaskRequestView,
  AnswerView,
  GrantView,
  type RequestSource,
} from './task-requests.js';
export { taskEffects, TaskEffectView, type EffectSource } from './task-effects.js';
export { taskShowView, type TaskShowSource } from './task-show-view.js';
export { taskBranch, type BranchView, type BranchChildView, type ChildLookup } from './task-branch.js';
export {
  taskStory,
  type TaskStory,
  type StorySource,
  type RunStory,
  type StoryCost,
  type TranscriptEntry,
  type ReportedCost,
} from './task-story.js';
