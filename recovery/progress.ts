import type { RecoveryProgress } from '../machines/index.js';

/** The report's shape is the supervisor machine's (its context keeps the latest while `validating`). */
export type { RecoveryProgress };

export type ProgressListener = (progress: RecoveryProgress) => void;

/** Counts so far of one thread's part of a recovery. */
export interface ProgressCount {
  tasks: number;
  events: number;
}

/**
 * Counts Tasks as they are checked and reports the running count every `tasks` Tasks or `events`
 * events (by count, not by time: the same root gives the same reports), and at `flush`.
 */
export class ProgressMeter {
  private tasks = 0;
  private events = 0;
  private reported: ProgressCount = { tasks: 0, events: 0 };

  constructor(
    private readonly emit: (count: ProgressCount) => void,
    private readonly every: ProgressCount = { tasks: 256, events: 50_000 },
  ) {}

  /** One more Task checked; `events` is the running count of events verified (the verifier's). */
  task(events: number): void {
    this.tasks++;
    this.events = events;
    if (this.tasks - this.reported.tasks >= this.every.tasks || this.events - this.reported.events >= this.every.events)
      this.flush();
  }

  /** Reports the count now, unless it was reported already. */
  flush(): void {
    if (this.tasks === this.reported.tasks && this.events === this.reported.events) return;
    this.reported = { tasks: this.tasks, events: this.events };
    this.emit(this.reported);
  }
}

/**
 * Adds up the counts of the threads of one recovery (the calling thread's and each worker's,
 * every one a running count of its own) and reports the sums against the totals.
 */
export function progressSum(
  listener: ProgressListener,
  totals: { totalTasks: number; totalEvents?: number },
): (part: number, count: ProgressCount) => void {
  const parts = new Map<number, ProgressCount>();
  return (part, count) => {
    parts.set(part, count);
    let tasks = 0;
    let events = 0;
    for (const p of parts.values()) {
      tasks += p.tasks;
      events += p.events;
    }
    listener({ tasks, events, ...totals });
  };
}
