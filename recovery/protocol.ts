import { z } from 'zod';
import { TaskSpec } from '../objects/index.js';
import { RECOVERY_FINDING_CODES } from './errors.js';

/** Messages between `rebuildParallel` and its recovery workers; both sides parse them with zod. */

export const RecoveryWorkerInput = z.object({
  root: z.string().min(1),
  /** Task id range [from, to) of the events key space this worker verifies; open ends when absent. */
  from: z.string().optional(),
  to: z.string().optional(),
  /** Tasks per `tasks` message. */
  chunk: z.number().int().positive().default(500),
  /** Check every object body against its kind's schema (`VerifierOptions.bodies`). */
  bodies: z.boolean().default(false),
  /**
   * `full`: verify and replay every event of the range (`verifyStore`); `checkpoint`: the per-Task
   * part of a checkpointed start (`checkpointedTasks`), whose journal the caller counted already.
   */
  mode: z.enum(['full', 'checkpoint']).default('full'),
  /** In `full` mode: offer each Task's checkpoint to the verifier (`RebuildOptions.checkpoints`). */
  checkpoints: z.boolean().default(false),
  /** Send `progress` messages (running counts of Tasks checked and events verified). */
  progress: z.boolean().default(false),
});
export type RecoveryWorkerInput = z.infer<typeof RecoveryWorkerInput>;

export const WireFinding = z.object({
  code: z.enum(RECOVERY_FINDING_CODES),
  taskId: z.string().optional(),
  revision: z.number().optional(),
  object: z.string().optional(),
  message: z.string(),
});

export const WireTask = z.object({
  taskId: z.string().min(1),
  revision: z.number().int().positive(),
  headDigest: z.string(),
  persisted: z.record(z.string(), z.unknown()),
  spec: TaskSpec.optional(),
});
export type WireTask = z.infer<typeof WireTask>;

export const RecoveryWorkerMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('tasks'), tasks: z.array(WireTask) }),
  z.object({
    type: z.literal('done'),
    findings: z.array(WireFinding),
    events: z.number().int().nonnegative(),
    objects: z.number().int().nonnegative(),
    /** Events replayed through the statechart (absent: all of `events`). */
    replayed: z.number().int().nonnegative().optional(),
    /** In `full` mode with `checkpoints`: how the range's replays started (`StartCounts`). */
    starts: z
      .object({
        trusted: z.number().int().nonnegative(),
        tailReplayed: z.number().int().nonnegative(),
        fullReplayed: z.number().int().nonnegative(),
        codeChanged: z.number().int().nonnegative(),
        headMismatch: z.number().int().nonnegative(),
      })
      .optional(),
    /** clientRequestId → Task ids whose replayed `dispatch.intend` named it. */
    requests: z.array(z.tuple([z.string(), z.array(z.string())])),
    /** In `checkpoint` mode: how the range's Tasks were started (see `CheckpointRecoveryReport`). */
    checkpoint: z
      .object({
        trusted: z.number().int().nonnegative(),
        tailReplayed: z.number().int().nonnegative(),
        fullReplayed: z.number().int().nonnegative(),
        stale: z.array(z.string()),
      })
      .optional(),
  }),
  /** Running counts of this worker's range: Tasks checked, events verified (see `ProgressMeter`). */
  z.object({
    type: z.literal('progress'),
    tasks: z.number().int().nonnegative(),
    events: z.number().int().nonnegative(),
  }),
  /** The worker could not run (not a finding: verification itself never throws across). */
  z.object({ type: z.literal('failed'), message: z.string() }),
]);
export type RecoveryWorkerMessage = z.infer<typeof RecoveryWorkerMessage>;
