import { join } from 'node:path';
import { createWorkspace, type Runtime } from '../runtime/index.js';
import type { ArtifactContracts } from '../objects/index.js';
import { type TaskHandle, type Supervisor, assignedStage, systemClock, type Clock } from '../kernel/index.js';
import type { ApprovalPolicy, HarnessConfig, HarnessFactory } from './harness-config.js';
import type { EffectAdapter } from './effect-adapter.js';

export type { HarnessConfig, HarnessFactory } from './harness-config.js';

export interface FrontierWorkOptions {
  runtime: Runtime;
  /** Harness name (as named by `assignment.commit`) → launch configuration. */
  harnesses: Record<string, HarnessConfig | HarnessFactory>;
  /** The answer to provider approval / permission requests unless a harness names its own (default `route`, `DEFAULT_APPROVALS`). */
  approvals?: ApprovalPolicy;
  /**
   * Root under which each Task Attempt gets its workspace. Admission re-reads `workspace` sources
   * under the supervisor's `<state>/workspaces` (`workspacesOf`), so that is the root to give.
   */
  workspaces: string;
  /**
   * Root under which Loop v0 runs keep their logs, per Task Attempt; it must be somewhere no
   * sandbox mounts (the Host gives `<state>/loops`). Default: `loops` beside `workspaces`.
   */
  loops?: string;
  /** Called with each step the Host takes, for progress output. */
  onStep?: (taskId: string, step: string) => void;
  maxArtifactBytes?: number;
  /** zod schemas a spec's artifacts may name (`openHost({ artifactContracts })`). */
  artifactContracts?: ArtifactContracts;
  /** Effect adapters by the name a candidate's `effect` action gives (docs/effects.md). */
  effectAdapters?: Record<string, EffectAdapter>;
  /** The clock DecisionRequest deadlines are set on (the supervisor's). */
  clock?: Clock;
  /**
   * The Tasks of this Host, for a branch stage's children (docs/branch-and-join.md): the
   * Supervisor the frontier works for, once it exists. Without it a branch stage cannot fan out.
   */
  tasks?: () => TaskFamily | undefined;
}

/** What a branch stage's work needs of the Supervisor: create its children, send to them, read and follow them (on many Hosts, wherever they are served). */
export type TaskFamily = Pick<
  Supervisor,
  'createTask' | 'getTask' | 'readTask' | 'send' | 'subscribe' | 'events' | 'taskActor' | 'actor'
>;

/** Deterministic per Task Attempt, Assignment generation and what is run: the same intent always gets the same id. */
export function clientRequestId(
  taskId: string,
  attempt: number,
  generation: number,
  what: 'run' | 'verify' | 'action' | 'effect' | 'branch',
): string {
  return `${taskId}/a${attempt}/g${generation}/${what}`;
}

/**
 * The job a deterministic request id names: the one the Runtime already has (a crash came between
 * starting it and recording its result), else the one `start` starts — never a second.
 */
export async function jobOf(
  deps: FrontierDeps,
  requestId: string,
  start: () => Promise<{ jobId: string }>,
): Promise<string> {
  const existing = await deps.options.runtime.findJobs({ clientRequestId: requestId });
  return existing[0]?.jobId ?? (await start()).jobId;
}

/** Where Loop v0 keeps the conversation of one Task Attempt, under the loops root: `<loops>/<taskId>/attempt-<n>`. */
export function loopLogPath(loops: string, taskId: string, attempt: number): string {
  return join(loops, taskId, `attempt-${attempt}`);
}

/** What names a Task Attempt's workspace. */
export type WorkspaceOwner = Pick<TaskHandle, 'taskId' | 'context' | 'spec'>;

/** What every piece of frontier work shares: the options, progress output, the Task Attempt's workspace, the artifact names. */
export interface FrontierDeps {
  readonly options: FrontierWorkOptions;
  readonly clock: Clock;
  /** Reports a step the Host takes (`onStep`). */
  step(task: TaskHandle, text: string): void;
  /** The Task Attempt's workspace (created, seeded, on first use). */
  workspaceOf(task: WorkspaceOwner): Promise<string>;
  /** Where a Loop v0 run of the Task Attempt keeps its log (`<loops>/<taskId>/attempt-<n>`; the loop makes it). */
  loopLogOf(task: WorkspaceOwner): string;
  /** The names of the Task's required artifacts (excluded from its source digest). */
  artifactNames(task: TaskHandle): string[];
  /** The artifacts the current Assignment's stage writes (what its run is told to look for). */
  stageArtifacts(task: TaskHandle): string[];
}

/** The shared part of `createFrontierWork`, made once per frontier runner. */
export function frontierDeps(options: FrontierWorkOptions): FrontierDeps {
  return {
    options,
    clock: options.clock ?? systemClock,
    step: (task, text) => options.onStep?.(task.taskId, text),
    workspaceOf: (task) =>
      createWorkspace({
        root: options.workspaces,
        taskId: task.taskId,
        attempt: task.context.attempt,
        ...(task.spec.workspaceSeed ? { seedFrom: task.spec.workspaceSeed } : {}),
      }),
    loopLogOf: (task) =>
      loopLogPath(options.loops ?? join(options.workspaces, '..', 'loops'), task.taskId, task.context.attempt),
    artifactNames: (task) => task.spec.requiredArtifacts.map((a) => a.name),
    stageArtifacts: (task) => assignedStage(task).produces,
  };
}
