import { z } from 'zod';
import type { FrontierWork } from '../machines/index.js';
import type { EventStore } from '../store/index.js';

/**
 * How many agent runs the Host starts at once (`SupervisorOptions.concurrency`): at most `runs`
 * on this Host, at most `harnesses[name]` of one harness. A limit left out is no limit.
 */
export const RunLimits = z.strictObject({
  runs: z.number().int().positive().optional(),
  harnesses: z.record(z.string(), z.number().int().positive()).optional(),
});
export type RunLimits = z.infer<typeof RunLimits>;

/**
 * A Task held back by a run limit: its Assignment is ready (`assigned.ready`, frontier `dispatch`)
 * and no dispatch intent is written until a slot frees. What `show`, `list` and the page call
 * `queued`.
 */
export interface QueuedRun {
  /** The limit it waits on: the Host's (`runs`) or its harness's (`harness`). */
  limit: 'runs' | 'harness';
  /** The harness its Assignment names. */
  harness: string;
  /** That limit's value: how many runs it lets hold a slot at once. */
  max: number;
  /** Its place in the Host's line of queued Tasks, from 1 (the next to be dispatched). */
  position: number;
}

/**
 * The work of a state whose run may be live (`assigned.dispatching`, `unknown`, `running`): a
 * Task there holds a slot. Read from the state's frontier, itself read from its state node's tag.
 */
const HOLDS_SLOT: ReadonlySet<FrontierWork> = new Set<FrontierWork>(['confirm_dispatch', 'reconcile', 'observe_run']);

/** Whether a Task at `frontier` holds a run slot (its run may be live). */
export function holdsRunSlot(frontier: FrontierWork): boolean {
  return HOLDS_SLOT.has(frontier);
}

/** A Task as the line sees it. */
export interface RunSlotTask {
  taskId: string;
  /** The harness of its current Assignment. */
  harness: string;
  /** It holds a slot (a run may be live, or its dispatch is being performed). */
  holding: boolean;
  /** Waiting for a slot: when it became ready (see `readyOrder`); undefined for a Task not waiting. */
  ready?: number;
}

/**
 * Which waiting Tasks may be dispatched now, and where the others stand. The line is the order
 * the waiting Tasks became ready (`ready`, ties by taskId); walking it, a Task is dispatched
 * when the Host and its harness each have a slot free; the Host full, every Task after waits on
 * `runs`; its harness full, it waits on `harness` and the Tasks behind it of other harnesses may
 * still go. Pure: the same Tasks and limits give the same answer, before and after a restart.
 */
export function runLine(
  tasks: Iterable<RunSlotTask>,
  limits: RunLimits,
): { dispatch: string[]; queued: Map<string, QueuedRun> } {
  let total = 0;
  const perHarness = new Map<string, number>();
  const waiting: Array<RunSlotTask & { ready: number }> = [];
  for (const task of tasks) {
    if (task.holding) {
      total++;
      perHarness.set(task.harness, (perHarness.get(task.harness) ?? 0) + 1);
    } else if (task.ready !== undefined) waiting.push(task as RunSlotTask & { ready: number });
  }
  waiting.sort((a, b) => a.ready - b.ready || (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0));
  const dispatch: string[] = [];
  const queued = new Map<string, QueuedRun>();
  for (const task of waiting) {
    const harnessMax = limits.harnesses?.[task.harness];
    const held = perHarness.get(task.harness) ?? 0;
    if (limits.runs !== undefined && total >= limits.runs)
      queued.set(task.taskId, { limit: 'runs', harness: task.harness, max: limits.runs, position: queued.size + 1 });
    else if (harnessMax !== undefined && held >= harnessMax)
      queued.set(task.taskId, { limit: 'harness', harness: task.harness, max: harnessMax, position: queued.size + 1 });
    else {
      dispatch.push(task.taskId);
      total++;
      perHarness.set(task.harness, held + 1);
    }
  }
  return { dispatch, queued };
}

/**
 * When a ready Task became ready: the monotonic reading (`mono`, ms since the epoch) of the latest
 * admitted `context.compile` in its history, the event that made its Assignment ready, or, when
 * the runs since were stopped by the Host, of the compile the first stopped run was dispatched
 * under. Read from the stored events, newest first, so it is the same after a restart; 0 when
 * there is none.
 */
export function readyOrder(store: EventStore, taskId: string, revision: number): number {
  let ready = 0;
  let found = false;
  for (let r = revision; r >= 1; r--) {
    const event = store.event(taskId, r);
    if (!event?.disposition.admitted) continue;
    if (event.type === 'context.compile' && !found) {
      ready = event.mono;
      found = true;
    } else if (event.type === 'run.observe' && found) {
      // A run the Host stopped (its job abandoned: a crash, a drain) is dispatched again under the
      // next generation, and keeps the place in line the stopped run had: its work is taken up
      // where it stood, before Tasks that have not started. Any other run ends the search.
      if (event.data.jobStatus !== 'abandoned') break;
      found = false;
    }
  }
  return ready;
}
