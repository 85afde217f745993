/** Where a Task whose dispatch waits for a run slot stands (the kernel's `QueuedRun`, as a view carries it). */
export interface QueuedText {
  limit: 'runs' | 'harness';
  harness: string;
  max: number;
  position: number;
}

// Apart from the view's schema: `show` and `list` print it, and their command table loads no zod.

/** `queued #2, waiting on concurrency.runs (2)`: where a queued Task stands, naming the configuration key it waits on. */
export function queuedText(queued: QueuedText): string {
  const key = queued.limit === 'runs' ? 'concurrency.runs' : `harnesses.${queued.harness}.maxRuns`;
  return `queued #${queued.position}, waiting on ${key} (${queued.max})`;
}
