import { TASK_MACHINE_VERSION, type TaskSnapshot } from '../machines/index.js';
import type { TaskSpec } from '../objects/index.js';
import {
  safeParseEventRecord,
  scanStreams,
  streamEnd,
  type EventStore,
  type Head,
  type RawEvent,
} from '../store/index.js';
import { checkpointEntries, projectionBytesDigest, safeParseCheckpoint } from './checkpoint-store.js';
import { eventDigest } from './digest.js';
import { machineCodeHash } from './machine-code.js';
import type { ProgressMeter } from './progress.js';
import type { HeadEntry } from './read-heads.js';
import type { RecoveryVerifier, ReplayStart, VerifiedTask } from './verifier.js';

/** A Task a checkpointed start accepted: its persisted snapshot, and the live one when it was replayed here. */
export interface CheckpointedTask {
  taskId: string;
  revision: number;
  headDigest: string;
  persisted: Record<string, unknown>;
  snapshot?: TaskSnapshot;
  spec?: TaskSpec;
}

/**
 * The per-Task part of a checkpointed start, for the given heads (all of them, or one range's in a
 * worker): each Task trusted, tail-replayed or replayed in full as `recoverFromCheckpoints`
 * (checkpoint.ts) describes, passed to `onTask` once accepted; findings go to the verifier.
 * `counted` says the journal's ends were checked by count (else each trusted Task's stream end is
 * probed, and `after` collects what the probes saw for the walk for streams without a head).
 * `keepSnapshots`: replayed Tasks keep their live snapshot (in-thread); a worker sends persisted
 * snapshots only.
 */
export function checkpointedTasks(
  store: EventStore,
  verifier: RecoveryVerifier,
  heads: HeadEntry[],
  counted: boolean,
  keepSnapshots: boolean,
  onTask: (task: CheckpointedTask) => void,
  meter?: ProgressMeter,
): { trusted: number; tailReplayed: number; fullReplayed: number; stale: string[]; after: Map<string, string | null> } {
  // Heads and checkpoints are both in Task id order: walk the two cursors together.
  const first = heads[0]?.taskId;
  const last = heads.at(-1)?.taskId;
  const checkpoints = checkpointEntries(store, first, last === undefined ? undefined : last + '\u0000');
  let pending = checkpoints.next();
  const checkpointOf = (taskId: string): unknown => {
    while (!pending.done && pending.value.taskId < taskId) pending = checkpoints.next();
    return !pending.done && pending.value.taskId === taskId ? pending.value.value : undefined;
  };
  const out = {
    trusted: 0,
    tailReplayed: 0,
    fullReplayed: 0,
    stale: [] as string[],
    after: new Map<string, string | null>(),
  };
  const accept = (task: VerifiedTask, spec: TaskSpec | undefined) => {
    const accepted: CheckpointedTask = {
      taskId: task.taskId,
      revision: task.revision,
      headDigest: task.headDigest,
      persisted: task.persisted,
    };
    if (task.snapshot) accepted.snapshot = task.snapshot;
    const known = (task.spec as TaskSpec | undefined) ?? spec;
    if (known !== undefined) accepted.spec = known;
    onTask(accepted);
  };
  const full = (taskId: string, head: Head | undefined, spec: TaskSpec | undefined) => {
    out.fullReplayed++;
    out.stale.push(taskId);
    const events = scanStreams(store, taskId, taskId + '\u0000').next().value?.events ?? [];
    const task = verifier.verifyStream(taskId, head, events, undefined, keepSnapshots);
    if (task) accept(task, spec);
  };

  const one = (taskId: string, read: (() => unknown) | undefined): void => {
    const head = verifier.head(taskId, read);
    const parsed = safeParseCheckpoint(checkpointOf(taskId));
    if (
      !head ||
      !parsed.success ||
      parsed.data.machineVersion !== TASK_MACHINE_VERSION ||
      parsed.data.codeHash !== machineCodeHash() ||
      parsed.data.revision > head.revision
    ) {
      full(taskId, head, parsed.success ? parsed.data.spec : undefined);
      return;
    }
    const checkpoint = parsed.data;
    if (checkpoint.revision === head.revision) {
      let intact = checkpoint.headDigest === head.digest;
      if (intact && !counted) {
        const end = streamEnd(store, taskId, head.revision);
        if (end.next !== undefined) out.after.set(taskId, end.next);
        intact = end.atHead;
      }
      intact &&= projectionBytesDigest(store, taskId) === checkpoint.projectionDigest;
      if (!intact) {
        full(taskId, head, checkpoint.spec);
        return;
      }
      out.trusted++;
      onTask({
        taskId,
        revision: head.revision,
        headDigest: head.digest,
        persisted: checkpoint.snapshot,
        spec: checkpoint.spec,
      });
      return;
    }
    // Checkpoint behind the head: anchor it to the stored event, then verify and replay the tail.
    const anchor = safeParseEventRecord(readEvent(store, taskId, checkpoint.revision));
    if (!anchor.success || eventDigest(anchor.data) !== checkpoint.headDigest) {
      full(taskId, head, checkpoint.spec);
      return;
    }
    out.tailReplayed++;
    out.stale.push(taskId);
    const start: ReplayStart = {
      revision: checkpoint.revision,
      digest: checkpoint.headDigest,
      snapshot: checkpoint.snapshot,
    };
    const tail: RawEvent[] =
      scanStreams(store, taskId, taskId + '\u0000', checkpoint.revision + 1).next().value?.events ?? [];
    const task = verifier.verifyStream(taskId, head, tail, start, keepSnapshots);
    if (task) accept(task, checkpoint.spec);
  };
  for (const { taskId, read } of heads) {
    one(taskId, read);
    meter?.task(verifier.events);
  }
  return out;
}

function readEvent(store: EventStore, taskId: string, revision: number): unknown {
  try {
    return store.rawEvent(taskId, revision);
  } catch {
    return undefined;
  }
}
