import type { EventStore } from '../store/index.js';
import type { TaskSpec } from '../objects/index.js';
import {
  CheckpointLedger,
  checkpointLiveTasks,
  commitCheckpoints,
  committedCheckpoint,
  type CheckpointBatch,
  type CheckpointInput,
} from '../recovery/index.js';
import type { Committed, TaskActor } from './task-actor.js';

/** `Supervisor.checkpoints()`: how checkpointing has gone since `start()`. */
export interface CheckpointStats {
  /** `checkpointEvery` in force (0: checkpoints only after boot and at a clean stop). */
  every: number;
  written: number;
  /** Checkpoints that could not be written; each only lengthens the next checkpointed start. */
  failed: number;
  /** The last failure's message, null when none. */
  lastFailure: string | null;
  /** Taken after commits and not yet written (or being written now). */
  pending: number;
}

export interface CheckpointSchedulerOptions {
  /** A Task gets a checkpoint once it has admitted this many events since its last one; 0: never while serving. */
  every: number;
  /** The open store; undefined once closed (nothing more is written). */
  store: () => EventStore | undefined;
  /** Each Task's spec (a checkpoint carries it); a Task without one gets no checkpoint. */
  specs: ReadonlyMap<string, TaskSpec>;
}

/**
 * Checkpoints Tasks while serving (`SupervisorOptions.checkpointEvery`), off the admission path:
 * a Task's checkpoint is taken synchronously right after the commit that makes it due (the
 * snapshot the commit wrote, bound to the hash of the projection bytes then), and written once
 * the current turn is over, together with every other Task that came due in that turn, in one
 * write transaction; one batch at a time. Also keeps the tally of the batches written at boot
 * and at a clean stop (`count`, `stop`).
 *
 * Failure semantics: a checkpoint only ever shortens the next start. A write that fails is counted
 * (`failed`, `lastFailure`), never thrown, and not remembered as written, so the Task's next commit
 * takes and writes it again. If the process dies after a commit and before its checkpoint is
 * written, the old checkpoint stays valid and the next checkpointed start replays the events after
 * it (about `every` per Task, plus those admitted while the write was pending).
 */
export class CheckpointScheduler {
  /** Checkpoints taken after commits and not yet written (one per Task). */
  private readonly due = new Map<string, CheckpointInput>();
  /** The write of the last batch queued; never rejects. */
  private writes: Promise<void> = Promise.resolve();
  private queued = false;
  /** The revisions of the batch being written now, by Task: its next checkpoint counts from there. */
  private readonly writing = new Map<string, number>();
  private readonly tally = { written: 0, failed: 0, lastFailure: null as string | null };
  /** Which checkpoint revisions are current: boot's validation records it, every write here adds to it. */
  readonly ledger = new CheckpointLedger();

  constructor(private readonly options: CheckpointSchedulerOptions) {}

  /** Adds a batch written elsewhere (after boot's validation) to the tally. */
  count(batch: CheckpointBatch): void {
    this.tally.written += batch.written;
    this.tally.failed += batch.failed;
    if (batch.error !== undefined) this.tally.lastFailure = batch.error;
  }

  /**
   * After a commit of `task`: when it has admitted `every` events since its last checkpoint and has
   * none pending, takes its checkpoint now and queues the write. A Task whose head is not at the
   * actor's revision (not this process's commit) gets none.
   */
  committed(committed: Committed, task: TaskActor): void {
    const store = this.options.store();
    const { every } = this.options;
    if (
      !store ||
      every <= 0 ||
      committed.revision -
        Math.max(this.ledger.revision(store, committed.taskId), this.writing.get(committed.taskId) ?? 0) <
        every ||
      this.due.has(committed.taskId)
    )
      return;
    const entry = committedCheckpoint(store, task, this.options.specs.get(committed.taskId));
    if (!entry) return;
    this.due.set(committed.taskId, entry);
    this.queue();
  }

  /** Resolves once the checkpoints taken so far are written, or failed to be. */
  written(): Promise<void> {
    return this.writes;
  }

  /**
   * A clean stop: waits for the writes in flight, drops what was taken after them, and checkpoints
   * every live Task whose checkpoint is behind (only state this process verified or admitted). Call
   * it once the Tasks have settled and before the store closes; it never throws.
   */
  async stop(tasks: Iterable<TaskActor>): Promise<void> {
    await this.writes;
    this.due.clear();
    const store = this.options.store();
    if (store) this.count(await checkpointLiveTasks(store, tasks, this.options.specs, this.ledger));
  }

  /** The tally since the Supervisor started, and the checkpoints taken but not yet written. */
  stats(): CheckpointStats {
    return { every: this.options.every, ...this.tally, pending: this.due.size + this.writing.size };
  }

  /** Writes the due checkpoints once the current turn is over, so Tasks due together share one transaction. */
  private queue(): void {
    if (this.queued) return;
    this.queued = true;
    this.writes = this.writes
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(async () => {
        this.queued = false;
        const batch = [...this.due];
        const entries = batch.map(([, entry]) => entry);
        this.due.clear();
        for (const [taskId, entry] of batch) this.writing.set(taskId, entry.revision);
        const store = this.options.store();
        try {
          if (store && entries.length > 0) this.count(await commitCheckpoints(store, entries, this.ledger));
        } finally {
          this.writing.clear();
        }
      });
  }
}
