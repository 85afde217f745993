import { createActor, type Snapshot, type StateValue } from 'xstate';
import { taskMachine, type TaskMachineContext, type TaskSnapshot } from '../machines/index.js';
import { OBJECT_KINDS, type TaskSpec } from '../objects/index.js';
import { headIds, headRecords, scanStreams, type EventStore } from '../store/index.js';
import type { Finding } from './errors.js';
import { identityFindings } from './identity-findings.js';
import { ProgressMeter, progressSum, type ProgressListener } from './progress.js';
import { lmdbVerifySource } from './source.js';
import { offeredCheckpoints } from './offered-checkpoints.js';
import { RecoveryVerifier, type StartCounts, type VerifiedTask, type VerifierOptions } from './verifier.js';

export interface RebuiltTask {
  taskId: string;
  snapshot: TaskSnapshot;
  revision: number;
  headDigest: string;
  /** The Task's spec, verified on the way (absent when the path did not read it). */
  spec?: TaskSpec;
}

export interface RecoveryReport {
  tasks: RebuiltTask[];
  findings: Finding[];
  /** Events verified: decoded, chained, their objects checked. */
  events: number;
  objects: number;
  /** Events of those replayed through the statechart (`events` unless checkpoints were trusted). */
  replayed?: number;
  /** With checkpoints trusted: how each Task's replay started (`StartCounts`). */
  starts?: StartCounts;
}

/** What a verification run is told besides the verifier's options. */
export interface RebuildOptions extends VerifierOptions {
  onProgress?: ProgressListener;
  /**
   * Trust checkpoints (invariant 7's boot): every event is still verified — chain, objects,
   * dispositions up to the head, projection, identity — but a Task whose checkpoint is of this
   * machine version and machine code (`machineCodeHash`) and whose revision and head digest are in
   * the verified chain is replayed through the statechart only after it. Without it every event
   * is replayed (`doctor --full`).
   */
  checkpoints?: boolean;
}

/**
 * Rebuilds every Task from its event stream and checks it (docs/design.md, invariant 7):
 * contiguous revisions from 1 and the digest chain up to the head (`stream_gap`,
 * `stream_corrupt`); every referenced object present and matching its digest (`object_missing`,
 * `object_corrupt`); replay through the statechart taking every event as it was recorded
 * (`replay_divergence`); the stored projection equal to the replayed snapshot
 * (`projection_drift`); no request or evidence identity claimed by two Tasks
 * (`identity_conflict`). Read-only: it never writes, so `doctor` runs it beside a live service.
 *
 * Objects are checked by digest; `bodies` also checks every body against its kind's schema
 * (`ordivon doctor`, backups). Runs on the calling thread. `rebuildParallel`
 * (parallel.ts) does the same checks split over worker threads;
 * `recoverFromCheckpoints` trusts verified checkpoints instead.
 */
export function rebuildAll(
  store: EventStore,
  options: RebuildOptions = {},
  /** What `onProgress` counts towards, when the caller read it already (else the heads are read for it). */
  totals?: { totalTasks: number; totalEvents?: number },
): RecoveryReport {
  const { onProgress, checkpoints, ...verifierOptions } = options;
  const verifier = new RecoveryVerifier(lmdbVerifySource(store), OBJECT_KINDS, verifierOptions);
  const tasks: RebuiltTask[] = [];
  const meter = onProgress
    ? new ProgressMeter(progressSum(onProgress, totals ?? headTotals(store)).bind(null, 0))
    : undefined;
  verifyStore(
    store,
    verifier,
    {},
    true,
    (task) => tasks.push(rebuiltOf(task, task.snapshot!)),
    meter,
    checkpoints ?? false,
  );
  meter?.flush();
  sortById(tasks);
  const findings = [
    ...verifier.findings,
    ...identityFindings(verifier.requestOwners, (kind) => store.indexEntries(kind)),
  ];
  return {
    tasks,
    findings,
    events: verifier.events,
    objects: verifier.objectCount,
    replayed: verifier.replayed,
    ...(checkpoints ? { starts: { ...verifier.starts } } : {}),
  };
}

/**
 * Rebuilds and checks one Task as `rebuildAll` does every Task (without the cross-Task identity
 * check, which the authority's claims enforce when several Hosts share a history): for a Host
 * taking a Task over. Findings are returned, not thrown; `task` is absent when there are any.
 */
export function rebuildTask(store: EventStore, taskId: string): { task?: RebuiltTask; findings: Finding[] } {
  const verifier = new RecoveryVerifier(lmdbVerifySource(store), OBJECT_KINDS);
  let rebuilt: RebuiltTask | undefined;
  verifyStore(store, verifier, { from: taskId, to: `${taskId}\u0000` }, true, (task) => {
    rebuilt = rebuiltOf(task, task.snapshot!);
  });
  const findings = verifier.findings;
  return findings.length === 0 && rebuilt ? { task: rebuilt, findings } : { findings };
}

/**
 * Verifies every Task whose id is in [from, to): each stream read by one cursor, then Tasks that
 * have a head but no events at all. Calls `onTask` for each Task that passed every check.
 * `checkpoints`: each Task's checkpoint is offered to the verifier (`RebuildOptions.checkpoints`).
 */
export function verifyStore(
  store: EventStore,
  verifier: RecoveryVerifier,
  range: { from?: string; to?: string },
  keepSnapshots: boolean,
  onTask: (task: VerifiedTask) => void,
  meter?: ProgressMeter,
  checkpoints = false,
): void {
  const withHead = new Set(headIds(store, range.from, range.to));
  const offer = checkpoints ? offeredCheckpoints(store, range.from, range.to) : undefined;
  for (const { taskId, events } of scanStreams(store, range.from, range.to)) {
    const head = verifier.head(taskId);
    withHead.delete(taskId);
    const task = verifier.verifyStream(taskId, head, events, undefined, keepSnapshots, offer?.(taskId));
    if (task) onTask(task);
    meter?.task(verifier.events);
  }
  for (const taskId of withHead) {
    const task = verifier.verifyStream(taskId, verifier.head(taskId), [], undefined, keepSnapshots);
    if (task) onTask(task);
    meter?.task(verifier.events);
  }
}

/** A Task and the events a full replay reads for it. */
export interface HeadWeight {
  taskId: string;
  events: number;
}

/**
 * Every Task with a head and how many events a full replay reads for it (its head's revision; 1
 * for a head without one, or one that cannot be decoded — the verifier names that head), in id
 * order, read with one cursor (or key by key once a value stops it).
 */
export function headWeights(store: EventStore): HeadWeight[] {
  const weights: HeadWeight[] = [];
  try {
    for (const { key, value } of headRecords(store)) {
      if (typeof key === 'string') weights.push({ taskId: key, events: headRevision(value) ?? 1 });
    }
    return weights;
  } catch {
    return headIds(store).map((taskId) => {
      let value: unknown;
      try {
        value = store.rawHead(taskId);
      } catch {
        value = undefined;
      }
      return { taskId, events: headRevision(value) ?? 1 };
    });
  }
}

/** What a full replay has to check (`headWeights` added up). */
export function headTotals(store: EventStore): { totalTasks: number; totalEvents: number } {
  const weights = headWeights(store);
  return { totalTasks: weights.length, totalEvents: weights.reduce((a, w) => a + w.events, 0) };
}

/** A stored head's revision, when it has a positive one. */
export function headRevision(value: unknown): number | undefined {
  const revision = (value as { revision?: unknown } | undefined)?.revision;
  return typeof revision === 'number' && revision > 0 ? revision : undefined;
}

export function rebuiltOf(task: VerifiedTask, snapshot: TaskSnapshot): RebuiltTask {
  const rebuilt: RebuiltTask = { taskId: task.taskId, snapshot, revision: task.revision, headDigest: task.headDigest };
  if (task.spec !== undefined) rebuilt.spec = task.spec as TaskSpec;
  return rebuilt;
}

export function sortById<T extends { taskId: string }>(tasks: T[]): T[] {
  return tasks.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0));
}

/**
 * A live machine snapshot from a persisted one (as stored in projections and checkpoints). For
 * this statechart (no child actors, no history states) `resolveState` gives the same snapshot
 * as restoring an actor, at a tenth of the cost; anything else takes the actor path.
 */
export function restoreTaskSnapshot(persisted: Record<string, unknown>): TaskSnapshot {
  const children = persisted.children as object | undefined;
  const history = persisted.historyValue as object | undefined;
  if (
    (children === undefined || Object.keys(children).length === 0) &&
    (history === undefined || Object.keys(history).length === 0)
  ) {
    // A persisted snapshot is what `getPersistedSnapshot` gave when it was written (the
    // projection check or the checkpoint's binding vouches for it): its members are taken as such.
    return taskMachine.resolveState({
      value: persisted.value as StateValue,
      context: persisted.context as TaskMachineContext,
      historyValue: {},
    });
  }
  return createActor(taskMachine, { snapshot: persisted as Snapshot<unknown> }).getSnapshot();
}
