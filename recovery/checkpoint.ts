import { TASK_MACHINE_VERSION, stateName } from '../machines/index.js';
import { safeParseEventRecord, type EventStore, type Head } from '../store/index.js';
import { checkpointEntries, projectionBytesDigest, safeParseCheckpoint } from './checkpoint-store.js';
import { OBJECT_KINDS, type TaskSpec } from '../objects/object-kinds.js';
import { eventDigest } from './digest.js';
import { ProgressMeter, progressSum, type ProgressListener } from './progress.js';
import { headIds, lmdbVerifySource, scanStreams, streamEnd, streamIdsAfterHeads } from './source.js';
import type { Finding } from '../actors/errors.js';
import {
  RecoveryVerifier,
  identityFindings,
  type RawEvent,
  type ReplayStart,
  type VerifiedTask,
} from './verifier.js';
import { rebuiltOf, restoreTaskSnapshot, sortById, type RebuiltTask, type RecoveryReport } from './rebuild.js';
import type { TaskSnapshot } from '../actors/task-actor.js';

export interface CheckpointRecoveryReport extends RecoveryReport {
  /** Tasks started from a checkpoint that matched their head and projection (nothing replayed). */
  trusted: number;
  /** Tasks whose events after their checkpoint were verified and replayed. */
  tailReplayed: number;
  /** Tasks without a usable checkpoint, verified and replayed from revision 1. */
  fullReplayed: number;
  /** Tasks whose checkpoint is not at their head (they should get a new one once serving). */
  stale: string[];
  /**
   * How the journal's ends were checked: `counted` — the events database holds exactly as many
   * entries as the heads' revisions add up to, so no stream was probed; `probed` — they differ
   * (or a head did not read), so every trusted Task's stream end was read and streams without a
   * head were looked for.
   */
  ends: 'counted' | 'probed';
}

/**
 * Checkpointed start: the cost grows with the number of Tasks and the events after their
 * checkpoints, not with their history. This runs on the calling thread;
 * `recoverFromCheckpointsParallel` (recovery-parallel.ts) gives the same report with long tails
 * split over worker threads.
 *
 * Per Task: the head must parse; its checkpoint (see checkpoint-store.ts) must parse, be of this
 * machine version and name the head's revision and digest; an event must exist at the head and
 * none after it; the stored projection's bytes must be the ones the checkpoint was bound to. Such
 * a Task is started from the checkpoint's snapshot. A checkpoint behind the head anchors a tail
 * replay instead: the event at the checkpoint's revision must have the checkpoint's digest, and
 * every later event gets the full checks (chain, objects, replay, dispositions, head,
 * projection). Anything else — no checkpoint, another machine version, a head or projection that
 * does not match — falls back to the full checks for that Task, so damage is reported with the
 * same finding codes as `rebuildAll`.
 *
 * Two checks are made over the whole store at a cost that does not grow with history:
 * - Stream ends, by count (`readHeads`): LMDB keeps each database's entry count, and
 *   when the events database holds exactly the sum of the heads' revisions, no stream has an
 *   event after its head or lacks the one at it unless another stream makes up the difference,
 *   and no stream lacks a head. Only when the numbers differ is each trusted Task's stream end
 *   read (one cursor step: a page of the journal per Task) and the journal walked for streams
 *   without a head, which the full check names (`stream_gap`).
 * - Identity claims: the index is read for the request ids the verified events name, one range
 *   read each.
 *
 * What this path does not re-read is what the Host already verified or refused when it was
 * written: a record damaged in the middle of an old stream, damage to stream ends that cancels
 * out in the count (an event removed from one stream and one added after another's head), an
 * identity claim added for another Task's old request id (the store refuses such a claim). Those
 * are the full check's (`rebuildAll`, `ordivon doctor --full`): finding them means reading the
 * history they are in.
 */
export function recoverFromCheckpoints(
  store: EventStore,
  read: ReturnType<typeof readHeads> = readHeads(store),
  onProgress?: ProgressListener,
): CheckpointRecoveryReport {
  const verifier = new RecoveryVerifier(lmdbVerifySource(store), OBJECT_KINDS);
  const { heads, counted } = read;
  const tasks: RebuiltTask[] = [];
  const meter = onProgress
    ? new ProgressMeter(progressSum(onProgress, { totalTasks: heads.length }).bind(null, 0))
    : undefined;
  const part = checkpointedTasks(store, verifier, heads, counted, true, (task) => tasks.push(rebuiltFrom(task)), meter);
  // Streams with events but no head: the full check names them (`stream_gap`).
  if (!counted) {
    for (const taskId of streamIdsAfterHeads(store, new Set(heads.map((h) => h.taskId)), part.after)) {
      part.fullReplayed++;
      part.stale.push(taskId);
      // Without a head it cannot pass (the verifier reports `stream_gap`); nothing is accepted.
      verifier.verifyStream(
        taskId,
        undefined,
        scanStreams(store, taskId, taskId + '\u0000').next().value?.events ?? [],
        undefined,
        false,
      );
      meter?.task(verifier.events);
    }
  }
  meter?.flush();
  sortById(tasks);
  const findings = [...verifier.findings, ...checkpointIdentityFindings(store, verifier.requestOwners)];
  const { trusted, tailReplayed, fullReplayed, stale } = part;
  return {
    tasks,
    findings,
    events: verifier.events,
    objects: verifier.objectCount,
    trusted,
    tailReplayed,
    fullReplayed,
    stale,
    ends: counted ? 'counted' : 'probed',
  };
}

/** A Task a checkpointed start accepted: its persisted snapshot, and the live one when it was replayed here. */
export interface CheckpointedTask {
  taskId: string;
  revision: number;
  headDigest: string;
  persisted: Record<string, unknown>;
  snapshot?: TaskSnapshot;
  spec?: TaskSpec;
}

/** The live Task of an accepted one: its replayed snapshot, or its persisted one restored. */
export function rebuiltFrom(task: CheckpointedTask): RebuiltTask {
  return rebuiltOf(task, task.snapshot ?? restoreTaskSnapshot(task.persisted));
}

/**
 * Identity claims for a checkpointed start: those of the request ids the verified events name,
 * one range read each; the whole index (every claim of every Task's history) is the full check's.
 */
export function checkpointIdentityFindings(store: EventStore, requestOwners: Map<string, Set<string>>): Finding[] {
  const named = [...requestOwners.keys()].sort();
  const claims = function* (kind: 'request' | 'evidence') {
    if (kind === 'request') for (const id of named) yield* store.indexEntries(kind, id);
  };
  return identityFindings(requestOwners, claims);
}

/**
 * The per-Task part of a checkpointed start, for the given heads (all of them, or one range's in a
 * worker): each Task trusted, tail-replayed or replayed in full as described above, passed to
 * `onTask` once accepted; findings go to the verifier. `counted` says the journal's ends were
 * checked by count (else each trusted Task's stream end is probed, and `after` collects what the
 * probes saw for the walk for streams without a head). `keepSnapshots`: replayed Tasks keep their
 * live snapshot (in-thread); a worker sends persisted snapshots only.
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

export type HeadEntry = { taskId: string; read?: () => unknown };

/**
 * Every head, in Task id order, read with one cursor, and whether the events database holds
 * exactly as many entries as their revisions add up to (LMDB's own count, read in O(1)). Not
 * counted when a head does not read as a record with a positive integer revision: the per-Task
 * checks then say which. A value the cursor cannot decode ends it: each head is then read on its
 * own, so the verifier names the one that fails.
 */
export function readHeads(
  store: EventStore,
  range: { from?: string; to?: string } = {},
): { heads: HeadEntry[]; counted: boolean } {
  const heads: HeadEntry[] = [];
  let sum = 0;
  let summable = true;
  try {
    for (const { key, value } of store.databases.heads.getRange({
      ...(range.from !== undefined ? { start: range.from } : {}),
      ...(range.to !== undefined ? { end: range.to } : {}),
    })) {
      if (typeof key !== 'string') continue;
      heads.push({ taskId: key, read: () => value });
      const revision =
        typeof value === 'object' && value !== null ? (value as { revision?: unknown }).revision : undefined;
      if (typeof revision === 'number' && Number.isSafeInteger(revision) && revision > 0) sum += revision;
      else summable = false;
    }
  } catch {
    return { heads: headIds(store, range.from, range.to).map((taskId) => ({ taskId })), counted: false };
  }
  // The count covers the whole journal: a range's heads are never `counted`.
  return {
    heads,
    counted: range.from === undefined && range.to === undefined && summable && store.journalSize() === sum,
  };
}

function readEvent(store: EventStore, taskId: string, revision: number): unknown {
  try {
    return store.databases.events.get([taskId, revision]);
  } catch {
    return undefined;
  }
}

/** The state name of a rebuilt Task, for checkpoint records. */
export function rebuiltState(task: RebuiltTask): string {
  return stateName(task.snapshot.value);
}
