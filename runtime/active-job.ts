import type { ExecutionContext, RuntimeLimits, TerminalPatch } from './job-execution.js';
import { isTerminal, type JobRecord } from './job-record.js';
import type { JobStore } from './job-store.js';
import { snapshotWorkspace, workspaceChanges, type WorkspaceSnapshot } from './workspace-changes.js';

/** What an active job needs from its Runtime. */
export interface ActiveJobDeps {
  store: JobStore;
  limits: RuntimeLimits;
  now: () => string;
  emit: (record: JobRecord) => void;
}

/** Runs a job's process or harness call; resolves with the fields of its terminal record. */
export type JobBody = (ctx: ExecutionContext) => Promise<TerminalPatch>;

/**
 * One job this Runtime is running: its latest durable record, its cancel controller, and its
 * record writes, chained so `running` can never land after the terminal record. Every write is
 * made durable (`flushed`) before the next one and before listeners hear of it.
 */
export class ActiveJob {
  record: JobRecord;
  readonly controller = new AbortController();
  /**
   * Resolves with the terminal record once it is durable; rejects when that write fails, or with the
   * error given to `fail` when the job never started.
   */
  readonly done: Promise<JobRecord>;
  private settle!: { resolve: (record: JobRecord) => void; reject: (error: unknown) => void };
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    record: JobRecord,
    private readonly deps: ActiveJobDeps,
  ) {
    this.record = record;
    this.done = new Promise<JobRecord>((resolve, reject) => (this.settle = { resolve, reject }));
    this.done.catch(() => undefined); // callers that await `done` see the rejection
  }

  /** Starts the body; call once, after the `starting` record is durable. */
  start(body: JobBody): Promise<JobRecord> {
    this.execute(body).then(this.settle.resolve, this.settle.reject);
    return this.done;
  }

  /**
   * Records the process group a harness job's provider leads (reported by the driver pool right
   * after the spawn), so that recovery can kill it if this process dies. Only the first report is
   * kept (a run spawns one provider); a report arriving after the terminal record is ignored.
   */
  recordProcess(process: { pid: number; startTicks: number }): void {
    this.update((r) =>
      r.process !== undefined || isTerminal(r.state) ? r : { ...r, process, updatedAt: this.deps.now() },
    );
  }

  /** Settles `done` for a job whose `starting` record never became durable. */
  fail(error: unknown): void {
    this.settle.reject(error);
  }

  private async execute(body: JobBody): Promise<JobRecord> {
    const { workspace } = this.record;
    const { limits, now } = this.deps;
    const signal = this.controller.signal;
    let patch: TerminalPatch;
    let snapshot: WorkspaceSnapshot | undefined;
    try {
      snapshot = await snapshotWorkspace(workspace, limits.maxWorkspaceEntries);
      if (signal.aborted) {
        // Stopped before anything was spawned (cancel or close while `starting`).
        patch = { state: signal.reason === 'cancel' ? 'cancelled' : 'abandoned', stopReason: signal.reason };
      } else {
        patch = await body({
          workspace,
          timeoutMs: this.record.timeoutMs,
          graceMs: this.record.graceMs,
          limits,
          cancel: signal,
          onRunning: (process) =>
            this.update((r) => ({
              ...r,
              state: 'running',
              startedAt: now(),
              updatedAt: now(),
              ...(process ? { process } : {}),
            })),
        });
      }
    } catch (error) {
      patch = { state: 'failed', error: { code: 'runtime_fault', detail: (error as Error).message } };
    }
    const files =
      snapshot === undefined
        ? undefined
        : await workspaceChanges(workspace, snapshot, limits.maxWorkspaceEntries).catch(() => undefined);
    this.update((r) => ({ ...r, ...patch, ...(files ? { files } : {}), endedAt: now(), updatedAt: now() }));
    await this.writes;
    return this.record;
  }

  // A failed write does not stop the next one; the last write's failure reaches `done`.
  private update(next: (record: JobRecord) => JobRecord): void {
    const write = this.writes
      .catch(() => undefined)
      .then(async () => {
        this.record = this.deps.store.updateJob(this.record.jobId, next);
        await this.deps.store.flushed();
        this.deps.emit(this.record);
      });
    write.catch(() => undefined);
    this.writes = write;
  }
}
