import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';
import { DispatchInput, VerifyInput, type DispatchInputIn, type VerifyInputIn } from './dispatch-input.js';
import { RuntimeError, parseError } from './errors.js';
import { subscribeProviderSpawns } from '../drivers/provider-spawn.js';
import { markedSandboxes, type MarkedSandboxes } from '../os/index.js';
import type { DriverRunInput } from '../drivers/receipt.js';
import type { ActiveJob } from './active-job.js';
import { Admission, type DispatchResult } from './admission.js';
import { currentExecutor } from './executor-identity.js';
import { executeCommand, executeHarness, executeVerify } from './job-execution.js';
import { Confiner, assertConfinement } from './confinement.js';
import { isTerminal, type ExecutorIdentity, type JobRecord } from './job-record.js';
import { JobStore } from './job-store.js';
import { abandonOrphan, ownerGone, type RecoveryReport } from './recovery.js';
import { RuntimeOptions, type RuntimeOptionsIn } from './runtime-options.js';
import { SharedJobs, type SharedJob } from './shared-jobs.js';
import { storedCommandRun, storedHarnessRun, storedVerifyRun } from './stored-run.js';

function parse<S extends z.ZodType>(schema: S, raw: unknown, code: 'invalid_dispatch' | 'invalid_options'): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw parseError(code, parsed.error);
  return parsed.data;
}

/** A job as a Runtime finds it: in its own store, or (`shared` set) in the job registry, run by another Host. */
type FoundJob = { record: JobRecord; shared?: undefined } | { record: JobRecord; shared: SharedJob };

/**
 * Owns processes and jobs in one LMDB environment of its own. Task meaning stays with the Host: a
 * job record is evidence (exit, output digests, files, harness result), never a Task outcome.
 * With a job registry (`registry`, many Hosts on one cluster) every record it makes durable is
 * also put there, and jobs of other Hosts are found, observed and abandoned through it.
 */
export class Runtime {
  readonly root: string;
  readonly executor: ExecutorIdentity;
  private readonly options: RuntimeOptions;
  private readonly store: JobStore;
  private readonly active = new Map<string, ActiveJob>();
  private readonly admission: Admission;
  private readonly pending = new Set<Promise<unknown>>();
  private readonly listeners = new Set<(record: JobRecord) => void>();
  private readonly shared: SharedJobs | undefined;
  private closed = false;
  private readonly stopSpawnWatch: () => void;
  private readonly confiner: Confiner;

  /** Use `createRuntime`, which also runs recovery. */
  constructor(options: RuntimeOptions, store: JobStore) {
    this.options = options;
    this.root = options.root;
    this.store = store;
    this.executor = currentExecutor(options.executorId);
    this.confiner = new Confiner({
      mode: options.confinement,
      limits: options.limits,
      hidden: [options.root, ...options.hidden],
    });
    this.shared = options.registry === undefined ? undefined : new SharedJobs(options.registry, () => this.now());
    const shared = this.shared;
    this.admission = new Admission({
      store,
      options,
      executor: this.executor,
      active: this.active,
      now: () => this.now(),
      emit: (record) => this.emit(record),
      announce: shared === undefined ? undefined : (record) => shared.announce(record),
      notify: (record) => this.notify(record),
      track: (promise) => this.track(promise),
    });
    // Harness runs execute elsewhere (the driver pool's threads); the pool reports each provider
    // it spawns, and the provider's group goes into the job record so recovery can kill it.
    this.stopSpawnWatch = subscribeProviderSpawns((spawn) => {
      const job = spawn.jobId === undefined ? undefined : this.active.get(spawn.jobId);
      if (job?.record.run.kind === 'harness' && job.record.run.runId === spawn.runId)
        job.recordProcess({ pid: spawn.pid, startTicks: spawn.startTicks });
    });
  }

  /**
   * Starts a command or harness job once per `clientRequestId`. Resolves after the `starting` record
   * (with this executor's id) is durable and before the process is spawned. A known id — on disk, or
   * being admitted right now by a concurrent call — resolves to the existing job with
   * `existing: true` and starts nothing — if it names the same request (workspace, run as the record
   * keeps it, timeout, and the grace when given); another request under a known id is
   * `idempotency_conflict`.
   * Rejects `invalid_dispatch` (nothing written),
   * `executor_unavailable` (harness job without an executor), `workspace_missing`,
   * `identity_conflict` (several jobs already indexed under the id), `store_write_failed`,
   * `runtime_closed`. With a job registry, the `starting` record is put there too before the
   * process is spawned; a clientRequestId another Host's job holds there answers that job (as a
   * known id does), and `registry_unavailable` means the put's outcome is unknown: the job is
   * recorded `failed` (error `registry_unavailable`) without being spawned, and the same id
   * answers it from then on.
   */
  async dispatch(raw: DispatchInputIn): Promise<DispatchResult> {
    this.assertOpen();
    const input = parse(DispatchInput, raw, 'invalid_dispatch');
    const { run } = input;
    if (run.kind === 'command')
      return this.admission.admit(input, storedCommandRun(run), (ctx) =>
        executeCommand(run, ctx, this.confiner.sandboxFor(ctx.jobId, ctx.workspace, run.confinement, 'none')),
      );
    const executor = this.options.harness;
    if (executor === undefined)
      throw new RuntimeError('executor_unavailable', 'no harness executor was given to createRuntime');
    if (run.input.cwd !== input.workspace)
      throw new RuntimeError('invalid_dispatch', 'run.input.cwd: must equal workspace', { path: 'run.input.cwd' });
    const driverInput = run.input;
    return this.admission.admit(input, storedHarnessRun(driverInput), (ctx) =>
      executeHarness(executor, this.confined({ ...driverInput, jobId: ctx.jobId }), ctx),
    );
  }

  /**
   * Starts an acceptance verification job (same idempotency and failure semantics as `dispatch`).
   * Its terminal record carries `verification: { exitCode, passed, sourceDigest, frozenTestDigests, … }`.
   */
  async verify(raw: VerifyInputIn): Promise<DispatchResult> {
    this.assertOpen();
    const input = parse(VerifyInput, raw, 'invalid_dispatch');
    return this.admission.admit(input, storedVerifyRun(input), (ctx) =>
      executeVerify(input, ctx, this.confiner.sandboxFor(ctx.jobId, ctx.workspace, input.confinement, 'none')),
    );
  }

  /** The harness input with the sandbox its provider starts in (none under `confinement: 'none'`). */
  private confined(input: DriverRunInput & { jobId: string }): DriverRunInput {
    const sandbox = this.confiner.sandboxFor(input.jobId, input.cwd, input.confinement, 'host');
    return sandbox === undefined ? input : { ...input, confinedIn: sandbox };
  }

  /**
   * Every job indexed under exactly this clientRequestId (0, 1, or — after corruption — more): this
   * Runtime's own, then (with a job registry) those other Hosts recorded there. Rejects
   * `record_corrupt` (a record or registry row that does not parse, naming it) or
   * `registry_unavailable`.
   */
  async findJobs(query: { clientRequestId: string }): Promise<JobRecord[]> {
    this.assertOpen();
    const local = this.store.findJobs(query.clientRequestId);
    if (this.shared === undefined) return local;
    await this.shared.flush();
    const here = new Set(local.map((record) => record.jobId));
    const shared = await this.shared.find(query.clientRequestId);
    return [...local, ...shared.filter((job) => !here.has(job.record.jobId)).map((job) => job.record)];
  }

  /** The record of one job, stored here or (with a job registry) by another Host; rejects `job_not_found`, `record_corrupt` or `registry_unavailable`. */
  async getJob(jobId: string): Promise<JobRecord> {
    return (await this.lookup(jobId)).record;
  }

  /**
   * Resolves with the job's terminal record: at once for a job already terminal on disk, when it ends
   * for a job of this Runtime, and by polling the store for a job run by another live Runtime (the
   * job registry for a job another live Host runs). A job whose executor turns out dead is
   * abandoned on the spot — for another Host's job, once that Host's heartbeat expired or it
   * stopped: recorded `abandoned` in the registry (`executor_gone`, `groupGone: false`: its
   * processes are on that Host's machine, not checked from here). Rejects `job_not_found`,
   * `record_corrupt`, `registry_unavailable`, `runtime_closed`, or with an `AbortError` when
   * `signal` aborts the wait.
   */
  async observe(jobId: string, options: { signal?: AbortSignal } = {}): Promise<JobRecord> {
    for (;;) {
      const job = this.active.get(jobId);
      if (job !== undefined) return job.done;
      const found = await this.lookup(jobId);
      if (isTerminal(found.record.state)) return found.record;
      if (await this.executorGone(found)) return this.abandon(found);
      await delay(this.options.foreignPollMs, undefined, { signal: options.signal });
    }
  }

  /**
   * Cancels a job: SIGTERM to its whole process group, SIGKILL after the grace, then the `cancelled`
   * record. Resolves with the terminal record; a job already terminal is returned unchanged, one
   * whose executor is gone is abandoned (as `observe` does). Rejects `job_not_found`, or
   * `job_foreign` for a job running under another live executor (or on another live Host).
   */
  async cancel(jobId: string): Promise<JobRecord> {
    this.assertOpen();
    const job = this.active.get(jobId);
    if (job !== undefined) {
      job.controller.abort('cancel');
      return job.done;
    }
    const found = await this.lookup(jobId);
    const { record } = found;
    if (isTerminal(record.state)) return record;
    if (await this.executorGone(found)) return this.abandon(found);
    const where = found.shared ? ` on host ${found.shared.hostId}` : '';
    throw new RuntimeError(
      'job_foreign',
      `job ${jobId} runs under live executor ${record.executorId}${where}; cancel it there`,
    );
  }

  /**
   * Calls `listener` with every job record this Runtime has just made durable (`starting`, `running`,
   * terminal, `abandoned`). A throwing listener is ignored. Returns the unsubscribe function.
   */
  subscribe(listener: (record: JobRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Marks every non-terminal job of a dead executor `abandoned`, killing its surviving process group
   * first. Jobs of live executors (this process, another live Runtime) are skipped. Only the
   * `['active', …]` index is scanned, so cost follows the number of unfinished jobs.
   */
  async recover(): Promise<RecoveryReport> {
    this.assertOpen();
    await this.shared?.flush();
    const report: RecoveryReport = { abandoned: [], skipped: [], corrupt: [] };
    // The process table read once, when the first orphan needs it, for every orphan of this pass.
    let marked: MarkedSandboxes | undefined;
    for (const jobId of this.store.activeJobIds()) {
      if (this.active.has(jobId)) continue;
      let record: JobRecord | undefined;
      try {
        record = this.store.getJob(jobId);
      } catch (error) {
        report.corrupt.push({ jobId, detail: (error as Error).message });
        continue;
      }
      if (record === undefined || isTerminal(record.state)) continue;
      if (ownerGone(record, this.executor))
        report.abandoned.push(await this.abandon({ record }, (marked ??= markedSandboxes())));
      else report.skipped.push({ jobId, executorId: record.executorId });
    }
    return report;
  }

  /**
   * Puts into the job registry every record not there yet: those `recover()` made before this
   * Host joined its cluster (the jobs of its previous process, recorded `abandoned`). Another Host
   * waiting on such a job reads its row while this Host heartbeats: it must not wait for this
   * Runtime's next record, which may never come. Never rejects (a put that fails waits for the
   * next record or `close`).
   */
  async flushRegistry(): Promise<void> {
    await this.shared?.flush();
  }

  /**
   * Stops accepting calls, then either stops this Runtime's running jobs (`jobs: 'stop'`, the
   * default: recorded `abandoned`, stop reason `runtime_closed`) or lets them run to their own end
   * and records it (`jobs: 'finish'`, a graceful shutdown whose results a later boot reconciles),
   * waits for every in-flight write, then closes LMDB. Idempotent.
   */
  async close(options: { jobs?: 'stop' | 'finish' } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopSpawnWatch();
    if (options.jobs !== 'finish') for (const job of this.active.values()) job.controller.abort('runtime_closed');
    await Promise.allSettled([...this.active.values()].map((job) => job.done));
    await Promise.allSettled([...this.pending]);
    // Records a failed put left behind get one more try; the registry may be gone by now.
    await this.shared?.flush();
    await this.store.close();
  }

  private now(): string {
    return new Date(this.options.clock()).toISOString();
  }

  private assertOpen(): void {
    if (this.closed) throw new RuntimeError('runtime_closed', `the Runtime at ${this.root} is closed`);
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    const forget = () => this.pending.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  /** A record was just made durable here: put it in the job registry too, and tell the listeners. */
  private emit(record: JobRecord): void {
    if (this.shared !== undefined) void this.track(this.shared.publish(record));
    this.notify(record);
  }

  private notify(record: JobRecord): void {
    for (const listener of this.listeners) {
      try {
        listener(record);
      } catch {
        // Observers must not be able to break job bookkeeping.
      }
    }
  }

  /** The job in this Runtime's store, else (with a job registry) as another Host recorded it; `job_not_found` when neither has it. */
  private async lookup(jobId: string): Promise<FoundJob> {
    this.assertOpen();
    const record = this.store.getJob(jobId);
    if (record !== undefined) return { record };
    const shared = await this.shared?.get(jobId);
    if (shared === undefined) throw new RuntimeError('job_not_found', `no job ${jobId}`);
    return { record: shared.record, shared };
  }

  private async executorGone(found: FoundJob): Promise<boolean> {
    if (found.shared === undefined) return ownerGone(found.record, this.executor);
    return this.shared!.executorGone(found.shared);
  }

  private abandon(found: FoundJob, marked?: MarkedSandboxes): Promise<JobRecord> {
    if (found.shared !== undefined) {
      // Recorded in the registry only: the job was never this Runtime's.
      const shared = found.shared;
      return this.track(this.shared!.abandon(shared).then((abandoned) => (this.notify(abandoned), abandoned)));
    }
    const done = abandonOrphan(this.store, found.record, {
      now: () => this.now(),
      reapTimeoutMs: this.options.reapTimeoutMs,
      ...(marked ? { marked } : {}),
    });
    return this.track(done.then((abandoned) => (this.emit(abandoned), abandoned)));
  }
}

/**
 * Opens the Runtime at `options.root` (its own `runtime.lmdb`) and, unless `recover: false`, runs
 * `recover()` before resolving. Rejects `invalid_options`, `confinement_unavailable` (confinement
 * `bwrap` and no sandbox can be started here: the message names what is missing), `store_open_failed`,
 * `format_unknown`.
 */
export async function createRuntime(raw: RuntimeOptionsIn): Promise<Runtime> {
  const options = parse(RuntimeOptions, raw, 'invalid_options');
  assertConfinement(options.confinement);
  const store = JobStore.open(options.root);
  const runtime = new Runtime(options, store);
  if (options.recover) {
    try {
      await runtime.recover();
    } catch (error) {
      await runtime.close();
      throw error;
    }
  }
  return runtime;
}
