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
import { checkpointEntries, projectionBytesDigest, safeParseCheckpoint, type Checkpoint } from './checkpoint-store.js';
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
  const walk: Walk = {
    store,
    verifier,
    counted,
    keepSnapshots,
    onTask,
    checkpointOf: checkpointCursor(store, heads),
    out: { trusted: 0, tailReplayed: 0, fullReplayed: 0, stale: [], after: new Map() },
  };
  for (const { taskId, read } of heads) {
    startTask(walk, taskId, read);
    meter?.task(verifier.events);
  }
  return walk.out;
}

/** One walk over the heads: what each Task's start reads and where it reports. */
interface Walk {
  store: EventStore;
  verifier: RecoveryVerifier;
  counted: boolean;
  keepSnapshots: boolean;
  onTask: (task: CheckpointedTask) => void;
  checkpointOf: (taskId: string) => unknown;
  out: {
    trusted: number;
    tailReplayed: number;
    fullReplayed: number;
    stale: string[];
    after: Map<string, string | null>;
  };
}

/** The stored checkpoint of each Task asked for, in Task id order. */
function checkpointCursor(store: EventStore, heads: HeadEntry[]): (taskId: string) => unknown {
  // Heads and checkpoints are both in Task id order: walk the two cursors together.
  const first = heads[0]?.taskId;
  const last = heads.at(-1)?.taskId;
  const checkpoints = checkpointEntries(store, first, last === undefined ? undefined : last + '\u0000');
  let pending = checkpoints.next();
  return (taskId) => {
    while (!pending.done && pending.value.taskId < taskId) pending = checkpoints.next();
    return !pending.done && pending.value.taskId === taskId ? pending.value.value : undefined;
  };
}

/** One Task: trusted at its checkpoint, its tail replayed after it, or replayed in full. */
function startTask(walk: Walk, taskId: string, read: (() => unknown) | undefined): void {
  const head = walk.verifier.head(taskId, read);
  const parsed = safeParseCheckpoint(walk.checkpointOf(taskId));
  if (
    !head ||
    !parsed.success ||
    parsed.data.machineVersion !== TASK_MACHINE_VERSION ||
    parsed.data.codeHash !== machineCodeHash() ||
    parsed.data.revision > head.revision
  ) {
    replayFull(walk, taskId, head, parsed.success ? parsed.data.spec : undefined);
    return;
  }
  const checkpoint = parsed.data;
  if (checkpoint.revision === head.revision) {
    if (!intactAtHead(walk, taskId, head, checkpoint)) {
      replayFull(walk, taskId, head, checkpoint.spec);
      return;
    }
    walk.out.trusted++;
    walk.onTask({
      taskId,
      revision: head.revision,
      headDigest: head.digest,
      persisted: checkpoint.snapshot,
      spec: checkpoint.spec,
    });
    return;
  }
  replayTail(walk, taskId, head, checkpoint);
}

/**
 * A checkpoint at the head is intact when it names the head's digest, the stream ends there (probed
 * unless the journal's ends were counted) and the stored projection is the one it was taken with.
 */
function intactAtHead(walk: Walk, taskId: string, head: Head, checkpoint: Checkpoint): boolean {
  let intact = checkpoint.headDigest === head.digest;
  if (intact && !walk.counted) {
    const end = streamEnd(walk.store, taskId, head.revision);
    if (end.next !== undefined) walk.out.after.set(taskId, end.next);
    intact = end.atHead;
  }
  intact &&= projectionBytesDigest(walk.store, taskId) === checkpoint.projectionDigest;
  return intact;
}

/** Checkpoint behind the head: anchor it to the stored event, then verify and replay the tail. */
function replayTail(walk: Walk, taskId: string, head: Head, checkpoint: Checkpoint): void {
  const anchor = safeParseEventRecord(readEvent(walk.store, taskId, checkpoint.revision));
  if (!anchor.success || eventDigest(anchor.data) !== checkpoint.headDigest) {
    replayFull(walk, taskId, head, checkpoint.spec);
    return;
  }
  walk.out.tailReplayed++;
  walk.out.stale.push(taskId);
  const start: ReplayStart = {
    revision: checkpoint.revision,
    digest: checkpoint.headDigest,
    snapshot: checkpoint.snapshot,
  };
  const tail: RawEvent[] =
    scanStreams(walk.store, taskId, taskId + '\u0000', checkpoint.revision + 1).next().value?.events ?? [];
  const task = walk.verifier.verifyStream(taskId, head, tail, start, walk.keepSnapshots);
  if (task) accept(walk, task, checkpoint.spec);
}

/** Replays the Task's stream from its start. */
function replayFull(walk: Walk, taskId: string, head: Head | undefined, spec: TaskSpec | undefined): void {
  walk.out.fullReplayed++;
  walk.out.stale.push(taskId);
  const events = scanStreams(walk.store, taskId, taskId + '\u0000').next().value?.events ?? [];
  const task = walk.verifier.verifyStream(taskId, head, events, undefined, walk.keepSnapshots);
  if (task) accept(walk, task, spec);
}

/** Hands a verified Task to `onTask`, with the spec its replay found or else the checkpoint's. */
function accept(walk: Walk, task: VerifiedTask, spec: TaskSpec | undefined): void {
  const accepted: CheckpointedTask = {
    taskId: task.taskId,
    revision: task.revision,
    headDigest: task.headDigest,
    persisted: task.persisted,
  };
  if (task.snapshot) accepted.snapshot = task.snapshot;
  const known = (task.spec as TaskSpec | undefined) ?? spec;
  if (known !== undefined) accepted.spec = known;
  walk.onTask(accepted);
}

function readEvent(store: EventStore, taskId: string, revision: number): unknown {
  try {
    return store.rawEvent(taskId, revision);
  } catch {
    return undefined;
  }
}
