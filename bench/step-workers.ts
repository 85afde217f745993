// The parallel ceiling of recovery (issue 33): XState's step alone (`stepFloor`) on C worker
// threads at once, each over its share of the streams, decoded before the clock starts. What a
// recovery over C workers could reach if everything but the statechart's step were free.
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createActor } from 'xstate';
import { taskMachine, type TaskEvent } from '../machines/index.js';
import { machineEvents } from './machine-events.js';

/** Worker threads the ceiling is measured on by default: those recovery would use (at most 8). */
export function ceilingWorkers(): number {
  return Math.min(availableParallelism(), 8);
}

/**
 * Starts `count` workers, each decoding every `count`-th stream of `root` (untimed); once all are
 * ready, times from the go until the last has stepped its streams. Resolves with those ms.
 */
export async function stepOnWorkers(root: string, count: number): Promise<number> {
  const workers = Array.from(
    { length: count },
    (_, part) => new Worker(new URL(import.meta.url), { workerData: { root, part, count } }),
  );
  try {
    const next = (worker: Worker) =>
      new Promise<unknown>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    await Promise.all(workers.map(next));
    const started = performance.now();
    const done = workers.map(next);
    for (const worker of workers) worker.postMessage('go');
    await Promise.all(done);
    return performance.now() - started;
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Task streams `part` of `count` of `root`, as the statechart takes them. */
async function share(root: string, part: number, count: number): Promise<TaskEvent[][]> {
  return (await machineEvents(root)).filter((_, i) => i % count === part);
}

/** floor.bench.ts's `stepFloor`: per stream, one started actor sent every event. */
function step(streams: TaskEvent[][]): void {
  for (const events of streams) {
    const actor = createActor(taskMachine).start();
    for (const event of events) actor.send(event);
    if (actor.getSnapshot().status === 'error') throw new Error('the statechart failed on a stream of the history');
    actor.stop();
  }
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const { root, part, count } = workerData as { root: string; part: number; count: number };
  const streams = await share(root, part, count);
  port.once('message', () => {
    step(streams);
    port.postMessage('done');
  });
  port.postMessage('ready');
}
