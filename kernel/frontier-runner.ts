import type { FrontierWork, TaskContext } from '../machines/index.js';
import type { EventStore } from '../store/index.js';
import type { TaskSpec } from '../objects/index.js';
import type { Attachments, SendResult } from './send-result.js';
import type { ObservationReader } from '../readsets/index.js';

/** What a frontier runner sees of a Task: its committed state and a way to send Host facts back. */
export interface TaskHandle {
  readonly taskId: string;
  readonly revision: number;
  readonly state: string;
  readonly context: TaskContext;
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
 */
export interface FrontierRunner {
  perform(task: TaskHandle, work: FrontierWork, signal: AbortSignal): Promise<void>;
  /** The harness names an Assignment may name; with them, one naming another is refused `harness_unknown` at admission. */
  readonly harnesses?: readonly string[];
  /** Observes an `effect` candidate's endpoint and target when a decision choosing it is admitted (read-set.ts). */
  readonly readObservation?: ObservationReader;
  close?(): Promise<void>;
}
