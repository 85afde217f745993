import type { EventStore } from '../store/index.js';
import { holdsRunSlot, readyOrder, runLine, type QueuedRun, type RunLimits, type RunSlotTask } from './run-queue.js';
import type { TaskActor } from './task-actor.js';

/** What the run slots read of the FrontierScheduler and the Supervisor. */
export interface RunSlotsDeps {
  limits: RunLimits;
  /** The Tasks served here. */
  tasks: ReadonlyMap<string, TaskActor>;
  store: () => EventStore | undefined;
  /** Whether the Task's `dispatch` work is in flight (it holds a slot while still `ready`). */
  dispatching: (taskId: string) => boolean;
  /** Whether the Task may be dispatched at all (no operator question about it pending). */
  eligible: (task: TaskActor) => boolean;
  /** Whether new work may start now (serving, not draining). */
  canStart: () => boolean;
  /** Starts the Task's `dispatch` work. */
  start: (task: TaskActor) => void;
}

/**
 * The line of Tasks whose dispatch waits for a run slot (docs/stages.md, "Concurrency limits").
 * Nothing of it is durable or needs to be: which Tasks wait is their state (`assigned.ready`, no
 * dispatch intent), which hold a slot is theirs too (`dispatching`, `unknown`, `running`, or a
 * dispatch in flight), and the order is read from their histories (`readyOrder`); so after a
 * restart the same Tasks wait in the same order. The Tasks the scheduler kicks at `dispatch` join
 * the line, and every change that may free a slot (a commit, work ending, a Task no longer
 * served) runs it once, after the current microtask: at boot every Task is kicked before any is
 * dispatched, so the first slots go to the first in line, not to the first kicked.
 */
export class RunSlots {
  /** Tasks kicked at `dispatch` and not yet started. */
  private readonly waiting = new Set<string>();
  /** Each waiting Task's `readyOrder`, read once per Assignment generation and Context. */
  private readonly readyAt = new Map<string, { key: string; mono: number }>();
  private scheduled = false;

  constructor(private readonly deps: RunSlotsDeps) {}

  /** The Task's dispatch waits for a slot: joins the line, which runs after this microtask. */
  wait(task: TaskActor): void {
    this.waiting.add(task.taskId);
    this.schedule();
  }

  /** Runs the line once the current microtask is over (once however often it is asked meanwhile). */
  schedule(): void {
    if (this.scheduled || this.waiting.size === 0) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.run();
    });
  }

  /** The Task is no longer served here: it leaves the line, and its slot, if it held one, frees. */
  forget(taskId: string): void {
    this.waiting.delete(taskId);
    this.readyAt.delete(taskId);
    this.schedule();
  }

  /** Where each queued Task stands now (a Task not in the map is not queued). */
  queued(): Map<string, QueuedRun> {
    return this.line().queued;
  }

  /** Starts the dispatch of every waiting Task a slot is free for, first in line first. */
  private run(): void {
    if (!this.deps.canStart()) return;
    for (const taskId of this.line().dispatch) {
      this.waiting.delete(taskId);
      this.readyAt.delete(taskId);
      this.deps.start(this.deps.tasks.get(taskId)!);
    }
  }

  /** The line as the served Tasks stand now; a waiting Task that left `dispatch` leaves it. */
  private line(): ReturnType<typeof runLine> {
    const store = this.deps.store();
    const tasks: RunSlotTask[] = [];
    for (const task of this.deps.tasks.values()) {
      const harness = task.context.assignment?.harness ?? '';
      const holding = holdsRunSlot(task.frontier) || this.deps.dispatching(task.taskId);
      const waiting = this.waiting.has(task.taskId) && task.frontier === 'dispatch' && !holding;
      if (!waiting) this.waiting.delete(task.taskId);
      if (holding) tasks.push({ taskId: task.taskId, harness, holding });
      else if (waiting && store && this.deps.eligible(task))
        tasks.push({ taskId: task.taskId, harness, holding, ready: this.readyOf(store, task) });
    }
    for (const taskId of this.waiting) if (!this.deps.tasks.has(taskId)) this.waiting.delete(taskId);
    return runLine(tasks, this.deps.limits);
  }

  private readyOf(store: EventStore, task: TaskActor): number {
    const { attempt, generation, contextDigest } = task.context;
    const key = `${attempt}/${generation}/${contextDigest}`;
    const known = this.readyAt.get(task.taskId);
    if (known?.key === key) return known.mono;
    const mono = readyOrder(store, task.taskId, task.revision);
    this.readyAt.set(task.taskId, { key, mono });
    return mono;
  }
}
