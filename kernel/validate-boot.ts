import type { BootSummary } from '../machines/index.js';
import type { EventStore } from '../store/index.js';
import type { CheckpointScheduler } from './checkpoint-scheduler.js';
import type { Clock } from './clock.js';
import { HostError } from './errors.js';
import { TaskSpec } from '../objects/index.js';
import { recoverForBoot, type ProgressListener, type RecoveryMode } from '../recovery/index.js';
import type { TaskSnapshot } from './task-actor.js';

export interface ValidateBootOptions {
  root: string;
  mode: RecoveryMode;
  clock: Clock;
  /** Told of every progress report first (the supervisor statechart's `progress` event). */
  progress: ProgressListener;
  /** The caller's listener (`SupervisorOptions.onBootProgress`); one that throws does not stop the boot. */
  listener?: ProgressListener | undefined;
  /** Counts the checkpoints written after the boot, and holds the ledger of which are current. */
  checkpoints: CheckpointScheduler;
}

/** A Task as validation rebuilt it, with its spec. */
export interface ValidatedTask {
  taskId: string;
  snapshot: TaskSnapshot;
  revision: number;
  spec: TaskSpec;
}

/**
 * The supervisor's `validating` step: recovers every Task from the store (`recoverForBoot`, full
 * or checkpointed), counts the checkpoints it wrote, and summarises what it did. Throws a
 * HostError with the first finding's code and every finding when the store is damaged, so the
 * Supervisor never serves on top of it. Writes nothing but those checkpoints (and none when
 * there are findings); if the process dies here, the next boot validates again.
 */
export async function validateBoot(
  store: EventStore,
  options: ValidateBootOptions,
): Promise<{ summary: BootSummary; tasks: ValidatedTask[] }> {
  const { listener } = options;
  const onProgress: ProgressListener = (progress) => {
    options.progress(progress);
    try {
      listener?.(progress);
    } catch {
      /* a listener's failure is its own */
    }
  };
  const started = options.clock.mono();
  const report = await recoverForBoot(store, { mode: options.mode, onProgress, ledger: options.checkpoints.ledger });
  options.checkpoints.count(report.checkpoints);
  const { mode, events, objects, workers, replayed, codeHash, checkpoint } = report;
  const summary: BootSummary = {
    mode,
    tasks: report.tasks.length,
    events,
    objects,
    replayed,
    codeHash,
    workers,
    ms: options.clock.mono() - started,
  };
  if (checkpoint) summary.checkpoint = { ...checkpoint };
  if (report.findings.length > 0) {
    const first = report.findings[0]!;
    throw new HostError(first.code, `state root ${options.root} failed validation: ${first.message}`, {
      findings: report.findings,
    });
  }
  const tasks = report.tasks.map(({ taskId, snapshot, revision, spec }) => ({
    taskId,
    snapshot,
    revision,
    spec: spec ?? TaskSpec.parse(store.getObject(snapshot.context.specDigest!, 'task-spec').body),
  }));
  return { summary, tasks };
}
