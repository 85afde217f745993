import { TASK_MACHINE_VERSION, stateName, taskMachine } from '../machines/index.js';
import type { EventStore } from '../store/index.js';
import {
  projectionBytesDigest,
  readCheckpoints,
  safeParseCheckpoint,
  writeCheckpoints,
  type CheckpointInput,
} from './checkpoint-store.js';
import type { TaskSpec } from '../objects/index.js';
import { jsonEqual } from './digest.js';
import { machineCodeHash } from './machine-code.js';
import { rebuildParallel, type ParallelReport } from './parallel.js';
import type { ProgressListener } from './progress.js';
import type { RebuiltTask, RecoveryReport } from './rebuild.js';
import type { StartCounts } from './verifier.js';

/**
 * How the supervisor validates the state root at boot (docs/design.md, invariant 7). Both verify
 * every event of every Task — contiguous revisions, the digest chain, every referenced object,
 * each disposition, the head, the projection, identity claims — over worker threads when cores are
 * idle; they differ in what is replayed through the statechart.
 * - `checkpoint` (default): a Task whose checkpoint is of the running machine version and machine
 *   code (`machineCodeHash`) and whose revision and head digest are in the verified chain is
 *   replayed only after it; any other Task from revision 1 (the report counts why: `codeChanged`,
 *   `headMismatch`). After a change of the machine's code every Task is replayed in full.
 * - `full`: every event is replayed (what `ordivon doctor --full` runs).
 */
export type RecoveryMode = 'full' | 'checkpoint';

export interface BootRecoveryOptions {
  mode?: RecoveryMode;
  /** Worker threads for the full path and long checkpoint tails (default: available parallelism, when a core is idle). */
  workers?: number;
  /** Running counts while it verifies (see `RecoveryProgress`). */
  onProgress?: ProgressListener;
  /** Told which checkpoints are current after the boot (default: a ledger of this call's own). */
  ledger?: CheckpointLedger;
}

/**
 * The revision each Task's checkpoint names, as one Supervisor last verified (at boot) or wrote it,
 * so a clean stop and the periodic checkpoints rewrite only Tasks that moved. Owned by the
 * Supervisor's CheckpointScheduler; read from the store the first time a store is asked about.
 */
export class CheckpointLedger {
  private store: EventStore | undefined;
  private known = new Map<string, number>();

  /** The revision of a Task's checkpoint; 0 when it has none. */
  revision(store: EventStore, taskId: string): number {
    return this.of(store).get(taskId) ?? 0;
  }

  /** After boot: exactly these Tasks' checkpoints are at their revisions. */
  remember(store: EventStore, tasks: RebuiltTask[]): void {
    this.store = store;
    this.known = new Map(tasks.filter((t) => t.spec).map((t) => [t.taskId, t.revision]));
  }

  /** After a write transaction committed these checkpoints. */
  wrote(store: EventStore, revisions: ReadonlyMap<string, number>, taskIds: readonly string[]): void {
    const known = this.of(store);
    for (const taskId of taskIds) known.set(taskId, revisions.get(taskId)!);
  }

  private of(store: EventStore): Map<string, number> {
    if (this.store !== store) {
      this.store = store;
      this.known = checkpointRevisions(store);
    }
    return this.known;
  }
}

export type BootRecoveryReport = RecoveryReport & {
  mode: RecoveryMode;
  /** Worker threads that did the work (0: the calling thread). */
  workers: number;
  /** Events replayed through the statechart (all `events` in `full` mode). */
  replayed: number;
  /** The running machine code's hash (`machineCodeHash`), the one the checkpoints written now carry. */
  codeHash: string;
  /** In `checkpoint` mode: how each Task's replay started. */
  checkpoint?: StartCounts;
  /** The checkpoints written after the boot (Tasks whose checkpoint was missing or behind). */
  checkpoints: CheckpointBatch;
};

/**
 * What one checkpoint write did. A checkpoint only ever shortens the next start, so a failed
 * write is counted and reported (`Supervisor.checkpoints()`), never thrown.
 */
export interface CheckpointBatch {
  written: number;
  /** Checkpoints wanted but not written (the write failed, or the Task's state could not be read). */
  failed: number;
  /** Why, when some failed. */
  error?: string;
}

const NONE_WRITTEN: CheckpointBatch = Object.freeze({ written: 0, failed: 0 });

/**
 * What a checkpoint is taken of while serving or at a clean stop: a live Task as the Host's
 * actor holds it (kernel/task-actor.ts), read at the moment of the call.
 */
export interface LiveTask {
  readonly taskId: string;
  /** The revision of the last event the actor took. */
  readonly revision: number;
  /** Its state name (`stateName` of the snapshot's value). */
  readonly state: string;
  /** Its persisted XState snapshot (`taskMachine.getPersistedSnapshot`). */
  persistedSnapshot(): Record<string, unknown>;
}

/**
 * Validates the store as the supervisor's `validating` step does (`RecoveryMode`), then — when
 * healthy and writable — records checkpoints for the Tasks it verified whose checkpoint is
 * missing, behind, or from other machine code, so the next boot replays nothing for them.
 * Findings are returned, not thrown.
 */
export async function recoverForBoot(
  store: EventStore,
  options: BootRecoveryOptions = {},
): Promise<BootRecoveryReport> {
  const mode = options.mode ?? 'checkpoint';
  const ledger = options.ledger ?? new CheckpointLedger();
  const codeHash = machineCodeHash();
  const { starts, ...report } = await rebuildParallel(store, {
    ...parallelOptions(options),
    checkpoints: mode === 'checkpoint',
  });
  const done = {
    ...report,
    mode,
    replayed: report.replayed ?? report.events,
    codeHash,
    ...(mode === 'checkpoint' && starts ? { checkpoint: starts } : {}),
  };
  if (report.findings.length > 0 || store.readOnly) return { ...done, checkpoints: NONE_WRITTEN };
  const existing = readExisting(store);
  const behind = new Set(
    report.tasks.filter((t) => {
      const current = safeParseCheckpoint(existing.get(t.taskId));
      return (
        !current.success ||
        current.data.revision !== t.revision ||
        current.data.headDigest !== t.headDigest ||
        current.data.machineVersion !== TASK_MACHINE_VERSION ||
        current.data.codeHash !== codeHash
      );
    }),
  );
  ledger.remember(
    store,
    report.tasks.filter((t) => !behind.has(t)),
  );
  return { ...done, checkpoints: await commitCheckpoints(store, [...checkpointsOf([...behind])], ledger) };
}

/**
 * The full verification (`ordivon doctor --full`): every check of `rebuildAll`, every event
 * replayed and every object body against its kind's schema included, over worker threads (when
 * cores are idle). Read-only.
 */
export function verifyFull(
  store: EventStore,
  options: { workers?: number; onProgress?: ProgressListener } = {},
): Promise<ParallelReport> {
  return rebuildParallel(store, { ...parallelOptions(options), bodies: true });
}

/**
 * Plain `ordivon doctor`: the checks of the default boot (every event verified, statechart replay
 * only after checkpoints the chain matches, `RecoveryMode` `checkpoint`) plus every object body
 * against its kind's schema, over worker threads (when cores are idle). Read-only: it writes no
 * checkpoint.
 */
export function verifyTails(
  store: EventStore,
  options: { workers?: number; onProgress?: ProgressListener } = {},
): Promise<ParallelReport> {
  return rebuildParallel(store, { ...parallelOptions(options), bodies: true, checkpoints: true });
}

function parallelOptions(options: { workers?: number; onProgress?: ProgressListener }): {
  workers?: number;
  onProgress?: ProgressListener;
} {
  return {
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  };
}

/** The stored checkpoints, or none when they cannot be read (then every Task's is rewritten). */
function readExisting(store: EventStore): Map<string, unknown> {
  try {
    return readCheckpoints(store);
  } catch {
    return new Map();
  }
}

function* checkpointsOf(tasks: RebuiltTask[]): Generator<CheckpointInput> {
  for (const task of tasks) {
    if (!task.spec) continue;
    yield {
      taskId: task.taskId,
      revision: task.revision,
      headDigest: task.headDigest,
      state: stateName(task.snapshot.value),
      snapshot: taskMachine.getPersistedSnapshot(task.snapshot) as Record<string, unknown>,
      spec: task.spec,
    };
  }
}

/**
 * At a clean stop: checkpoints the live Tasks that moved since their checkpoint. A Task is
 * checkpointed only if its head is at the actor's revision and its stored projection equals the
 * live actor's snapshot, i.e. only state this process verified at boot and then admitted itself.
 * Never throws (a failure only means a longer next start; it is counted in the batch).
 */
export async function checkpointLiveTasks(
  store: EventStore,
  tasks: Iterable<LiveTask>,
  specs: ReadonlyMap<string, TaskSpec>,
  ledger: CheckpointLedger,
): Promise<CheckpointBatch> {
  if (store.readOnly) return NONE_WRITTEN;
  const entries: CheckpointInput[] = [];
  let unread = 0;
  let error: string | undefined;
  for (const task of tasks) {
    try {
      if (ledger.revision(store, task.taskId) === task.revision) continue;
      const head = store.head(task.taskId);
      const projection = store.projection(task.taskId);
      const spec = specs.get(task.taskId);
      const persisted = task.persistedSnapshot();
      if (
        !head ||
        !projection ||
        !spec ||
        head.revision !== task.revision ||
        projection.revision !== task.revision ||
        !jsonEqual(projection.snapshot, persisted)
      )
        continue;
      entries.push({
        taskId: task.taskId,
        revision: task.revision,
        headDigest: head.digest,
        state: task.state,
        snapshot: persisted,
        spec,
      });
    } catch (cause) {
      unread++;
      error = (cause as Error).message;
    }
  }
  const batch = await commitCheckpoints(store, entries, ledger);
  return unread === 0 ? batch : { written: batch.written, failed: batch.failed + unread, error: batch.error ?? error! };
}

/**
 * While serving, right after a Task's commit (`SupervisorOptions.checkpointEvery`): the checkpoint
 * of the state it just committed, or undefined when its head is not at the actor's revision (not
 * this process's commit). The head, projection and event were written in one transaction by this
 * process from this snapshot, so the projection's bytes are hashed now, not decoded and compared;
 * the write may come after the Task has moved on (`commitCheckpoints`).
 */
export function committedCheckpoint(
  store: EventStore,
  task: LiveTask,
  spec: TaskSpec | undefined,
): CheckpointInput | undefined {
  try {
    const head = store.head(task.taskId);
    const projectionDigest = projectionBytesDigest(store, task.taskId);
    if (!spec || !head || head.revision !== task.revision || projectionDigest === undefined) return undefined;
    return {
      taskId: task.taskId,
      revision: task.revision,
      headDigest: head.digest,
      state: task.state,
      snapshot: task.persistedSnapshot(),
      spec,
      projectionDigest,
    };
  } catch {
    return undefined;
  }
}

/** Writes checkpoints in one transaction and records their revisions in the ledger; never throws. */
export async function commitCheckpoints(
  store: EventStore,
  entries: CheckpointInput[],
  ledger: CheckpointLedger,
): Promise<CheckpointBatch> {
  if (entries.length === 0) return NONE_WRITTEN;
  try {
    const revisions = new Map(entries.map((e) => [e.taskId, e.revision]));
    const written = await writeCheckpoints(store, entries);
    ledger.wrote(store, revisions, written);
    return { written: written.length, failed: 0 };
  } catch (error) {
    return { written: 0, failed: entries.length, error: (error as Error).message };
  }
}

function checkpointRevisions(store: EventStore): Map<string, number> {
  const out = new Map<string, number>();
  for (const [taskId, value] of readCheckpoints(store)) {
    const parsed = safeParseCheckpoint(value);
    if (
      parsed.success &&
      parsed.data.machineVersion === TASK_MACHINE_VERSION &&
      parsed.data.codeHash === machineCodeHash()
    )
      out.set(taskId, parsed.data.revision);
  }
  return out;
}
