import { createActor } from 'xstate';
import { TASK_MACHINE_VERSION, stateName, taskMachine } from '../machines/index.js';
import { OBJECT_KINDS } from '../objects/index.js';
import { Checkpoint, eventDigest, machineCodeHash, machineEventOf, readCheckpoints } from '../recovery/index.js';
import { EventRecord, EventStore, scanStreams, sha256Text, updateMeta } from '../store/index.js';

/**
 * Bench-only: rewrites every Task's checkpoint as if it had been taken `lag` events before the
 * head, the state a crash leaves when checkpoints were last written a while ago. The snapshot at
 * the earlier revision is computed by replaying the stream prefix; the digest is the stored
 * event's. Tails are then verified and replayed by the next checkpointed start (which writes
 * fresh checkpoints again). Existing checkpoints supply the specs; run a full boot first.
 */
export async function rewindCheckpoints(root: string, lag: number): Promise<number> {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, purpose: 'bench rewind' });
  let written = 0;
  try {
    const existing = readCheckpoints(store);
    await updateMeta(store, (meta) => {
      for (const { taskId, events } of scanStreams(store)) {
        const current = Checkpoint.safeParse(existing.get(taskId));
        const cut = events.length - lag;
        if (!current.success || cut < 1) continue;
        const actor = createActor(taskMachine).start();
        let digest = '';
        for (const raw of events.slice(0, cut)) {
          const record = EventRecord.parse(raw.value);
          actor.send(machineEventOf(record, raw.revision));
          digest = eventDigest(record);
        }
        const snapshot = actor.getSnapshot();
        const record: Checkpoint = {
          revision: cut,
          headDigest: digest,
          machineVersion: TASK_MACHINE_VERSION,
          codeHash: machineCodeHash(),
          state: stateName(snapshot.value),
          snapshot: taskMachine.getPersistedSnapshot(snapshot),
          // Not compared for a checkpoint behind the head (only the tail's projection is).
          projectionDigest: sha256Text(`rewound ${taskId} ${cut}`),
          spec: current.data.spec,
        };
        actor.stop();
        meta.put('checkpoint', taskId, JSON.stringify(record));
        written++;
      }
    });
  } finally {
    await store.close();
  }
  return written;
}
