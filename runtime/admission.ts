import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { ActiveJob } from './active-job.js';
import { RuntimeError } from './errors.js';
import type { ExecutionContext, TerminalPatch } from './job-execution.js';
import type { ExecutorIdentity, JobRecord, StoredRun } from './job-record.js';
import type { JobStore } from './job-store.js';
import type { RuntimeOptions } from './runtime-options.js';
import type { SharedJob } from './shared-jobs.js';

/** The answer to `dispatch` / `verify`: the job id, and whether it already existed for that clientRequestId. */
export interface DispatchResult {
  jobId: string;
  existing: boolean;
}

/** What runs a job once it is admitted: the command, harness or verification body. */
export type AdmitBody = (ctx: ExecutionContext & { jobId: string }) => Promise<TerminalPatch>;

function newJobId(): string {
  // Time-ordered prefix: new jobs land near each other in the B-tree, which keeps inserts cheap.
  return `job_${Date.now().toString(36).padStart(9, '0')}_${randomBytes(8).toString('hex')}`;
}

/** What admission shares with its Runtime: the store, the jobs running now, and its bookkeeping. */
export interface AdmissionContext {
  store: JobStore;
  options: RuntimeOptions;
  executor: ExecutorIdentity;
  /** The Runtime's running jobs; admission registers each job it starts here. */
  active: Map<string, ActiveJob>;
  now: () => string;
  /** Tells listeners (and the job registry, when there is one) of a record just made durable. */
  emit: (record: JobRecord) => void;
  /**
   * With a job registry: puts a `starting` record there before anything is spawned (see
   * `SharedJobs.announce`); then `notify` tells only the listeners of it.
   */
  announce?: ((record: JobRecord) => Promise<SharedJob | undefined>) | undefined;
  notify: (record: JobRecord) => void;
  /** Keeps `promise` among the writes `Runtime.close` waits for. */
  track: <T>(promise: Promise<T>) => Promise<T>;
}

/**
 * Admits jobs once per `clientRequestId` (see `Runtime.dispatch` for the semantics): a known id —
 * on disk, or being admitted right now — answers the existing job, if it names the same request.
 */
export class Admission {
  private readonly admitting = new Map<string, { request: JobRequest; jobId: Promise<string> }>();
  private readonly ctx: AdmissionContext;

  constructor(ctx: AdmissionContext) {
    this.ctx = ctx;
  }

  // Everything up to `createJob` runs synchronously, so a second call with the same id in the same
  // turn finds either the `admitting` entry or the committed index entry.
  async admit(
    input: { clientRequestId: string; workspace: string; timeoutMs: number; graceMs?: number | undefined },
    run: StoredRun,
    body: AdmitBody,
  ): Promise<DispatchResult> {
    const id = input.clientRequestId;
    const request: JobRequest = { workspace: input.workspace, run, timeoutMs: input.timeoutMs, graceMs: input.graceMs };
    const admitting = this.admitting.get(id);
    if (admitting !== undefined) {
      assertSameRequest(id, 'a job being admitted', admitting.request, request);
      return { jobId: await admitting.jobId, existing: true };
    }
    const known = this.knownJob(id);
    if (known !== undefined) return this.existing(id, known, request);
    if (!statSync(input.workspace, { throwIfNoEntry: false })?.isDirectory()) {
      throw new RuntimeError('workspace_missing', `${input.workspace} is not a directory`);
    }
    const at = this.ctx.now();
    const record: JobRecord = {
      v: 1,
      jobId: newJobId(),
      clientRequestId: id,
      workspace: input.workspace,
      run,
      timeoutMs: input.timeoutMs,
      graceMs: input.graceMs ?? this.ctx.options.graceMs,
      executorId: this.ctx.executor.executorId,
      executor: this.ctx.executor,
      state: 'starting',
      createdAt: at,
      updatedAt: at,
    };
    const admitted = this.ctx.track(this.admitNew(record, request, body));
    const jobIdPromise = admitted.then((result) => result.jobId);
    jobIdPromise.catch(() => undefined); // observed by the callers awaiting `admitted`
    this.admitting.set(id, { request: requestOf(record), jobId: jobIdPromise });
    try {
      return await admitted;
    } finally {
      this.admitting.delete(id);
    }
  }

  /** The job indexed under `id`, if any (its record read and parsed); more than one is `identity_conflict`. */
  private knownJob(id: string): JobRecord | undefined {
    const known = this.ctx.store.findJobs(id);
    if (known.length > 1) throw new RuntimeError('identity_conflict', `${known.length} jobs are indexed under ${id}`);
    return known[0];
  }

  /** The job already indexed under `id`, if it was asked for with the same request. */
  private existing(id: string, record: JobRecord, request: JobRequest): DispatchResult {
    assertSameRequest(id, `job ${record.jobId}`, requestOf(record), request);
    return { jobId: record.jobId, existing: true };
  }

  private async admitNew(record: JobRecord, request: JobRequest, body: AdmitBody): Promise<DispatchResult> {
    if (!this.ctx.store.createJob(record)) {
      // Another process admitted the same id between our read and our transaction.
      const known = this.knownJob(record.clientRequestId);
      if (known === undefined)
        throw new RuntimeError('record_corrupt', `${record.clientRequestId} was indexed when admitted and is not now`);
      return this.existing(record.clientRequestId, known, request);
    }
    // Registered before the flush so a cancel arriving meanwhile is seen before anything is spawned.
    const job = new ActiveJob(record, {
      store: this.ctx.store,
      limits: this.ctx.options,
      now: this.ctx.now,
      emit: this.ctx.emit,
    });
    this.ctx.active.set(record.jobId, job);
    try {
      await this.ctx.store.flushed();
    } catch (cause) {
      this.ctx.active.delete(record.jobId);
      const error = new RuntimeError(
        'store_write_failed',
        `job ${record.jobId} could not be made durable: ${(cause as Error).message}`,
        { cause },
      );
      job.fail(error);
      throw error;
    }
    const forget = () => this.ctx.active.delete(record.jobId);
    if (this.ctx.announce !== undefined) {
      let holder: SharedJob | undefined;
      try {
        holder = await this.ctx.announce(record);
      } catch (error) {
        // The registry may or may not hold the `starting` record now: the job ends `failed` without
        // being spawned, so whichever Host finds it under this clientRequestId sees it end.
        const detail = (error as Error).message;
        this.ctx.notify(record);
        this.ctx
          .track(job.start(async () => ({ state: 'failed', error: { code: 'registry_unavailable', detail } })))
          .then(forget, forget);
        throw error;
      }
      if (holder !== undefined) return this.yieldTo(record, job, holder, request);
      this.ctx.notify(record);
    } else {
      this.ctx.emit(record);
    }
    this.ctx.track(job.start((ctx) => body({ ...ctx, jobId: record.jobId }))).then(forget, forget);
    return { jobId: record.jobId, existing: false };
  }

  /** Another Host's job holds the clientRequestId in the registry: ours never ran and is deleted; the request names that job. */
  private async yieldTo(
    record: JobRecord,
    job: ActiveJob,
    holder: SharedJob,
    request: JobRequest,
  ): Promise<DispatchResult> {
    this.ctx.active.delete(record.jobId);
    this.ctx.store.removeJob(record.jobId);
    await this.ctx.store.flushed();
    job.fail(new RuntimeError('identity_conflict', `${record.clientRequestId} is held by job ${holder.record.jobId}`));
    return this.existing(record.clientRequestId, holder.record, request);
  }
}

/** What a `clientRequestId` stands for: the request as its job record keeps it (`graceMs` absent: the Runtime's default). */
interface JobRequest {
  workspace: string;
  run: StoredRun;
  timeoutMs: number;
  graceMs?: number | undefined;
}

function requestOf(record: JobRecord): JobRequest {
  return { workspace: record.workspace, run: record.run, timeoutMs: record.timeoutMs, graceMs: record.graceMs };
}

/**
 * A repeated clientRequestId must name the same request (as an idempotency key does): answering a
 * different one with the old job would let a caller believe its new run was started. Compared on
 * what the record keeps: environment variable names, not values; the prompt by its digest; the
 * grace only when the caller gave one.
 */
function assertSameRequest(id: string, holder: string, known: JobRequest, asked: JobRequest): void {
  const fields = ['workspace', 'run', 'timeoutMs', 'graceMs'] as const;
  // A grace left to the default is not compared (the default may have changed since).
  const differ = fields.filter(
    (field) => !(field === 'graceMs' && asked.graceMs === undefined) && !isDeepStrictEqual(known[field], asked[field]),
  );
  if (differ.length > 0) {
    throw new RuntimeError(
      'idempotency_conflict',
      `clientRequestId ${id} already names ${holder} with another request (differs in ${differ.join(', ')}); nothing was started`,
    );
  }
}
