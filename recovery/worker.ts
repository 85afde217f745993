import { parentPort, workerData } from 'node:worker_threads';
import { EventStore } from '../store/index.js';
import { OBJECT_KINDS } from '../objects/index.js';
import { checkpointedTasks } from './checkpointed-tasks.js';
import { ProgressMeter } from './progress.js';
import { RecoveryWorkerInput, type RecoveryWorkerMessage, type WireTask } from './protocol.js';
import { readHeads } from './read-heads.js';
import { verifyStore } from './rebuild.js';
import { lmdbVerifySource } from './source.js';
import { RecoveryVerifier } from './verifier.js';

/**
 * Worker thread of `rebuildParallel` and `recoverFromCheckpointsParallel`: verifies the Tasks of
 * one id range from its own read-only handle on the state root — every event (`full`), or a
 * checkpointed start's per-Task work (`checkpoint`) — and streams the accepted Tasks back in
 * chunks (plain data: persisted snapshots, not live actors). Anything that stops it from running
 * is sent as a `failed` message; findings are data in the `done` message.
 */
async function run(): Promise<void> {
  const port = parentPort!;
  const post = (message: RecoveryWorkerMessage) => port.postMessage(message);
  // A warm worker (`WarmWorkers`) has loaded its modules and waits for its input as a message.
  const given: unknown =
    (workerData as { warm?: unknown } | undefined)?.warm === true
      ? await new Promise((resolve) => port.once('message', resolve))
      : workerData;
  let store: EventStore | undefined;
  try {
    const input = RecoveryWorkerInput.parse(given);
    store = EventStore.open({ root: input.root, kinds: OBJECT_KINDS, readOnly: true });
    const verifier = new RecoveryVerifier(lmdbVerifySource(store), OBJECT_KINDS, { bodies: input.bodies });
    const range = {
      ...(input.from !== undefined ? { from: input.from } : {}),
      ...(input.to !== undefined ? { to: input.to } : {}),
    };
    let chunk: WireTask[] = [];
    const send = (task: {
      taskId: string;
      revision: number;
      headDigest: string;
      persisted: Record<string, unknown>;
      spec?: unknown;
    }) => {
      const wire: WireTask = {
        taskId: task.taskId,
        revision: task.revision,
        headDigest: task.headDigest,
        persisted: task.persisted,
      };
      if (task.spec !== undefined) wire.spec = task.spec as WireTask['spec'];
      chunk.push(wire);
      if (chunk.length >= input.chunk) {
        post({ type: 'tasks', tasks: chunk });
        chunk = [];
      }
    };
    const meter = input.progress
      ? new ProgressMeter(({ tasks, events }) => post({ type: 'progress', tasks, events }))
      : undefined;
    let checkpoint: { trusted: number; tailReplayed: number; fullReplayed: number; stale: string[] } | undefined;
    if (input.mode === 'checkpoint') {
      const { trusted, tailReplayed, fullReplayed, stale } = checkpointedTasks(
        store,
        verifier,
        readHeads(store, range).heads,
        true,
        false,
        send,
        meter,
      );
      checkpoint = { trusted, tailReplayed, fullReplayed, stale };
    } else {
      verifyStore(store, verifier, range, false, send, meter, input.checkpoints);
    }
    if (chunk.length > 0) post({ type: 'tasks', tasks: chunk });
    meter?.flush();
    post({
      type: 'done',
      findings: verifier.findings,
      events: verifier.events,
      objects: verifier.objectCount,
      replayed: verifier.replayed,
      ...(input.mode === 'full' && input.checkpoints ? { starts: { ...verifier.starts } } : {}),
      requests: [...verifier.requestOwners].map(([id, owners]) => [id, [...owners]]),
      ...(checkpoint ? { checkpoint } : {}),
    });
  } catch (error) {
    post({ type: 'failed', message: (error as Error).stack ?? String(error) });
  } finally {
    await store?.close();
  }
}

void run();
