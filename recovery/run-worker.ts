import { Worker } from 'node:worker_threads';
import { CodedError, zodIssue } from '../base/index.js';
import type { Finding } from './errors.js';
import type { ProgressCount } from './progress.js';
import { RecoveryWorkerMessage, type RecoveryWorkerInput } from './protocol.js';
import { restoreTaskSnapshot, type RebuiltTask } from './rebuild.js';
import type { StartCounts } from './verifier.js';

/** The worker's entry, loaded by path: worker.ts beside this file (as compiled, worker.js in dist/recovery/). */
const WORKER_URL = new URL('./worker.js', import.meta.url);

/**
 * A recovery worker that failed: `worker_unavailable` when it could not run (a missing build file,
 * a crash: the caller falls back to the calling thread), `worker_malformed` when it sent a message
 * outside the protocol (a defect: not retried).
 */
export class RecoveryWorkerError extends CodedError<'worker_unavailable' | 'worker_malformed'> {}

const unavailable = (message: string) => new RecoveryWorkerError('worker_unavailable', message);

/** What one worker verified: its range's accepted Tasks (live snapshots), findings and counts. */
export interface Part {
  tasks: RebuiltTask[];
  findings: Finding[];
  events: number;
  objects: number;
  replayed: number;
  starts?: StartCounts;
  requests: Array<[string, string[]]>;
  checkpoint?: { trusted: number; tailReplayed: number; fullReplayed: number; stale: string[] };
}

/*
 * One thread per range rather than piscina (which runs the driver pool): recovery runs once per
 * boot, each thread's young generation is sized for its range, and the thread's exit is what tells
 * the caller the worker's LMDB handle is closed (see the `done` case below); a pool keeps threads
 * alive past their task, so it would need a second close handshake and buys no reuse here. What a
 * pool would give — threads that have loaded their modules before the work is known — is
 * `WarmWorkers`: threads started while the caller still reads the heads and samples the idle
 * cores, each given one range and then exiting.
 */

/**
 * Recovery workers started before their ranges are known: each loads its modules (a few hundred
 * ms of a cold thread's start) and waits for its input message. `take` hands one to `runWorker`;
 * `close` ends those not taken (a boot that stays on the calling thread).
 */
export class WarmWorkers {
  private readonly idle: Worker[];

  constructor(count: number, youngGenerationMb: number) {
    this.idle = Array.from({ length: count }, () => spawn({ warm: true }, youngGenerationMb));
    // A warm thread that fails before it is taken is simply not used (the taker sees it exit).
    for (const worker of this.idle) worker.on('error', () => undefined);
  }

  get size(): number {
    return this.idle.length;
  }

  take(): Worker | undefined {
    return this.idle.shift();
  }

  async close(): Promise<void> {
    await Promise.all(this.idle.splice(0).map((worker) => worker.terminate()));
  }
}

function spawn(workerData: unknown, youngGenerationMb: number): Worker {
  return new Worker(WORKER_URL, { workerData, resourceLimits: { maxYoungGenerationSizeMb: youngGenerationMb } });
}

/** Runs one recovery worker over a Task id range: rejects `worker_unavailable` when it cannot run, `worker_malformed` when it sends a malformed message. */
export function runWorker(
  root: string,
  range: { from: string | undefined; to: string | undefined },
  work: Pick<RecoveryWorkerInput, 'mode' | 'bodies'> & { checkpoints?: boolean },
  youngGenerationMb: number,
  onProgress?: (count: ProgressCount) => void,
  /** A warm worker to run it (`WarmWorkers.take`); else a new thread is started. */
  warm?: Worker,
): Promise<Part> {
  const input: RecoveryWorkerInput = {
    root,
    chunk: 500,
    checkpoints: false,
    ...work,
    progress: onProgress !== undefined,
    ...(range.from !== undefined ? { from: range.from } : {}),
    ...(range.to !== undefined ? { to: range.to } : {}),
  };
  return new Promise<Part>((resolve, reject) => {
    const worker = warm ?? spawn(input, youngGenerationMb);
    if (warm) warm.postMessage(input);
    const tasks: RebuiltTask[] = [];
    let done: Part | undefined;
    let settled = false;
    const finish = (outcome: { part: Part } | { error: Error }) => {
      if (settled) return;
      settled = true;
      if ('part' in outcome) resolve(outcome.part);
      else reject(outcome.error);
    };
    worker.on('message', (raw: unknown) => {
      const parsed = RecoveryWorkerMessage.safeParse(raw);
      if (!parsed.success) {
        const { code, message } = zodIssue('worker_malformed', parsed.error);
        return finish({ error: new RecoveryWorkerError(code, `recovery worker sent a malformed message: ${message}`) });
      }
      const message = parsed.data;
      if (message.type === 'tasks') {
        for (const wire of message.tasks) {
          const rebuilt: RebuiltTask = {
            taskId: wire.taskId,
            snapshot: restoreTaskSnapshot(wire.persisted),
            revision: wire.revision,
            headDigest: wire.headDigest,
          };
          if (wire.spec !== undefined) rebuilt.spec = wire.spec;
          tasks.push(rebuilt);
        }
      } else if (message.type === 'progress') {
        onProgress?.({ tasks: message.tasks, events: message.events });
      } else if (message.type === 'done') {
        // Resolved at exit, not here: the worker still closes its LMDB handle after `done`, and an
        // open by this thread overlapping that close can meet the environment's destroyed mutexes
        // (the race store/env-gate.ts gates across processes; threads of one process are not gated).
        done = {
          tasks,
          findings: message.findings,
          events: message.events,
          objects: message.objects,
          replayed: message.replayed ?? message.events,
          requests: message.requests,
        };
        if (message.starts) done.starts = message.starts;
        if (message.checkpoint) done.checkpoint = message.checkpoint;
      } else {
        finish({ error: unavailable(message.message) });
      }
    });
    worker.on('error', (error) => finish({ error: unavailable(error.message) }));
    worker.on('exit', (code) =>
      finish(
        done && code === 0
          ? { part: done }
          : { error: unavailable(`recovery worker exited with code ${code} before finishing`) },
      ),
    );
  });
}
