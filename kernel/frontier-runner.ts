import type { FrontierWork, TaskMachineContext } from '../machines/index.js';
import type { EventStore } from '../store/index.js';
import type { TaskSpec } from '../objects/index.js';
import type { Attachments, SendResult } from './send-result.js';
import type { ObservationReader } from '../readsets/index.js';

/** What a frontier runner sees of a Task: its committed state and a way to send Host facts back. */
export interface TaskHandle {
  readonly taskId: string;
  readonly revision: number;
  readonly state: string;
  readonly context: TaskMachineContext;
  readonly spec: TaskSpec;
  readonly store: EventStore;
  /** Sends a Host-origin event (the only way Host-only facts enter a stream). */
  send(event: Record<string, unknown>, attachments?: Attachments): Promise<SendResult>;
}

/**
 * Performs a Task's frontier work after a commit (compile a Context, dispatch, reconcile,
 * observe a run, evaluate, verify). The supervisor calls it with at most one piece of work
 * per Task at a time, after every commit and once per Task at boot; it must be idempotent,
 * because a crash can interrupt it anywhere and boot will call it again for the same state.
 * Work that throws is tried again as `SupervisorOptions.frontierRetry` says, and put to an
 * operator once its attempts are spent (kernel/frontier-retry.ts).
 */
export interface FrontierRunner {
  perform(task: TaskHandle, work: FrontierWork, signal: AbortSignal): Promise<void>;
  /** The harness names an Assignment may name; with them, one naming another is refused `harness_unknown` at admission. */
  readonly harnesses?: readonly string[];
  /** Observes an `effect` candidate's endpoint and target when a decision choosing it is admitted (read-set.ts). */
  readonly readObservation?: ObservationReader;
  /**
   * Reports a step the Host takes for a Task outside `perform` (the FrontierScheduler's question
   * about work that failed too often), as the runner reports its own.
   */
  step?(taskId: string, text: string): void;
  close?(): Promise<void>;
}
