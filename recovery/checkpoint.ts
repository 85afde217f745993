import { OBJECT_KINDS } from '../objects/index.js';
import { scanStreams, streamIdsAfterHeads, type EventStore } from '../store/index.js';
import { checkpointedTasks, type CheckpointedTask } from './checkpointed-tasks.js';
import type { Finding } from './errors.js';
import { identityFindings } from './identity-findings.js';
import { ProgressMeter, progressSum, type ProgressListener } from './progress.js';
import { readHeads } from './read-heads.js';
import { rebuiltOf, restoreTaskSnapshot, sortById, type RebuiltTask, type RecoveryReport } from './rebuild.js';
import { lmdbVerifySource } from './source.js';
import { RecoveryVerifier } from './verifier.js';

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
 * `recoverFromCheckpointsParallel` (parallel.ts) gives the same report with long tails
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
