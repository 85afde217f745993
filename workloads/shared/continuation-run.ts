import type { EventStore } from '../../store/index.js';
import { demoChild } from './child.js';
import type { ContinuationTrajectory } from './continuation.js';
import {
  checkPhases,
  expectations,
  parsePhase,
  readTasks,
  type ContinuationExpectation,
  type Expect,
  type PhaseReport,
} from './continuation-read.js';

/**
 * Running a continuation (shared/continuation.ts) and reading it back, for any world: process 1
 * loses every answer, a fresh process 2 continues, and each trajectory's Task is read from the
 * read-only store.
 */

/** What every world's continuation report holds beside its own trajectories. */
export interface ContinuationRun<R> {
  pids: { demo: number; lose: number; continue: number };
  /** What the two child processes reported. */
  phases: { lose: PhaseReport; continue: PhaseReport };
  trajectories: R[];
  expectations: ContinuationExpectation[];
}

export interface ContinuationPhases {
  /** The Host state root the two processes share. */
  state: string;
  /** `ordivon demo` arguments beside `--continuation-phase` (the workload, the backend's URL, the ACP agent). */
  args: string[];
  /** Names the continuation in progress lines and errors (`continuation`, `world-w1 continuation`). */
  label: string;
  /** Who decides what in process 1, and what the backend does with each answer. */
  lose: string;
  /** Makes the backend commit each perform and drop its answer; `restore` switches it back. */
  dropAnswers(): Promise<unknown>;
  restore(): Promise<unknown>;
  say(line: string): void;
}

/** Runs process 1 with every answer dropped, then the fresh process 2; resolves with what each reported. */
export async function runPhases(options: ContinuationPhases): Promise<{ lost: PhaseReport; continued: PhaseReport }> {
  const { state, label, say } = options;
  const child = async (phase: string) =>
    parsePhase(await demoChild(state, [...options.args, '--continuation-phase', phase], say), `${label} ${phase}`);
  await options.dropAnswers();
  say(`${label}: process 1 (${options.lose})`);
  const lost = await child('lose');
  await options.restore();
  say(`${label}: process 2 (fresh; B continues with no transcript)`);
  const continued = await child('continue');
  return { lost, continued };
}

/**
 * Reads the trajectories back: the phases checked (checkPhases), then each Task process 1 reported
 * read by `read` from the read-only store at `state` with its trajectory's `expect`; `more` adds a
 * world's own expectations (`check(scenario)` gives a scenario's `expect`).
 */
export async function readContinuationRun<T extends ContinuationTrajectory, R>(
  state: string,
  trajectories: readonly T[],
  phases: { lost: PhaseReport; continued: PhaseReport },
  read: (store: EventStore, t: T, taskId: string, expect: Expect) => R,
  more?: (check: (scenario: string) => Expect) => void,
): Promise<ContinuationRun<R>> {
  const { lost, continued } = phases;
  const { list, check } = expectations();
  const pids = checkPhases(check, trajectories, lost, continued);
  const rows = await readTasks(state, trajectories, lost, (store, t, taskId) => read(store, t, taskId, check(t.name)));
  more?.(check);
  return { pids, phases: { lose: lost, continue: continued }, trajectories: rows, expectations: list };
}
