import { RuntimeError, isRuntimeError, parseError } from './errors.js';
import { JobRecord } from './job-record.js';
import { registryError, type JobRegistry, type RegistryJob } from './job-registry.js';

/** A job read from the registry: its record, parsed, and the Host whose Runtime ran it. */
export interface SharedJob {
  hostId: string;
  record: JobRecord;
}

/**
 * A Runtime's side of the job registry: puts each record it makes durable (in order per job; one
 * that fails is put again by `flush`, so a later record is never overtaken by an earlier one),
 * reads other Hosts' jobs back through the JobRecord schema, and decides when such a job's
 * executor is gone: its Host's heartbeat expired or it stopped. Parsing is strict: a row that does
 * not parse, or names another job or request than asked for, is `record_corrupt`.
 */
export class SharedJobs {
  /** The latest record of each job not yet in the registry. */
  private readonly unsent = new Map<string, JobRecord>();
  /** Each job's puts, one after another. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    readonly registry: JobRegistry,
    private readonly now: () => string,
  ) {}

  /**
   * Puts the `starting` record of a job this Runtime admitted, before anything is spawned. Resolves
   * undefined when the registry holds it now, or with the job that already holds its
   * clientRequestId (another Host started the request first: this one must not run). Rejects
   * `registry_unavailable` when the outcome is unknown.
   */
  async announce(record: JobRecord): Promise<SharedJob | undefined> {
    try {
      await this.registry.put(record);
      return undefined;
    } catch (error) {
      if (!isRuntimeError(error, 'identity_conflict')) throw registryError(error);
      const holder = (await this.find(record.clientRequestId)).find((job) => job.record.jobId !== record.jobId);
      if (holder === undefined) throw error;
      return holder;
    }
  }

  /**
   * Puts a record after it is durable here, and any an earlier failed put left behind; never
   * rejects (a record that could not be put waits for the next `publish` or `flush`).
   */
  publish(record: JobRecord): Promise<void> {
    this.unsent.set(record.jobId, record);
    return this.flush();
  }

  /** Puts again every record a failed put left behind. Never rejects. */
  async flush(): Promise<void> {
    await Promise.all([...this.unsent.keys()].map((jobId) => this.send(jobId)));
  }

  /** Jobs recorded under exactly `clientRequestId`, by any Host. */
  async find(clientRequestId: string): Promise<SharedJob[]> {
    const rows = await this.call(() => this.registry.find(clientRequestId));
    return rows.map((row) => parseRow(row, { clientRequestId }));
  }

  async get(jobId: string): Promise<SharedJob | undefined> {
    const row = await this.call(() => this.registry.get(jobId));
    return row === undefined ? undefined : parseRow(row, { jobId });
  }

  /**
   * Whether the executor of a job this Runtime does not hold is gone: its Host stopped or its
   * heartbeat expired (database clock). A job recorded under this very Host id but unknown here was
   * run by an earlier process of this Host (Host ids are unique among live Hosts), so it is gone.
   */
  async executorGone(job: SharedJob): Promise<boolean> {
    if (job.hostId === this.registry.hostId) return true;
    return !(await this.call(() => this.registry.alive(job.hostId)));
  }

  /**
   * Records another Host's job `abandoned` (`executor_gone`) in the registry, and resolves with the
   * terminal record stored after: this one, or the Host's own if it got there first. Its processes
   * are on another machine: they are neither checked nor stopped (`groupGone: false`).
   */
  async abandon(job: SharedJob): Promise<JobRecord> {
    const at = this.now();
    const abandoned: JobRecord = {
      ...job.record,
      state: 'abandoned',
      exitCode: null,
      signal: null,
      stopReason: 'executor_gone',
      groupGone: false,
      endedAt: at,
      updatedAt: at,
      abandonedBy: {
        hostId: this.registry.hostId,
        detail: `host ${job.hostId} stopped heartbeating; its processes were not checked or stopped from host ${this.registry.hostId}`,
      },
    };
    const stored = await this.call(() => this.registry.put(abandoned));
    return parseRow(stored, { jobId: job.record.jobId }).record;
  }

  private send(jobId: string): Promise<void> {
    const next = (this.chains.get(jobId) ?? Promise.resolve()).then(async () => {
      const record = this.unsent.get(jobId);
      if (record === undefined) return;
      try {
        await this.registry.put(record);
        if (this.unsent.get(jobId) === record) this.unsent.delete(jobId);
      } catch (error) {
        // Kept for the next flush unless putting it again cannot help (a corrupt or conflicting row).
        if (!registryError(error).retryable && this.unsent.get(jobId) === record) this.unsent.delete(jobId);
      }
    });
    this.chains.set(jobId, next);
    void next.then(() => {
      if (this.chains.get(jobId) === next) this.chains.delete(jobId);
    });
    return next;
  }

  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw registryError(error);
    }
  }
}

function parseRow(row: RegistryJob, expected: { jobId?: string; clientRequestId?: string }): SharedJob {
  const parsed = JobRecord.safeParse(row.record);
  const name = expected.jobId ?? expected.clientRequestId;
  if (!parsed.success) throw parseError('record_corrupt', parsed.error, `job registry row for ${name}`);
  const record = parsed.data;
  if (expected.jobId !== undefined && record.jobId !== expected.jobId)
    throw new RuntimeError(
      'record_corrupt',
      `job registry row for ${expected.jobId} holds the record of ${record.jobId}`,
    );
  if (expected.clientRequestId !== undefined && record.clientRequestId !== expected.clientRequestId)
    throw new RuntimeError(
      'record_corrupt',
      `job registry row ${record.jobId} found under ${expected.clientRequestId} is the record of ${record.clientRequestId}`,
    );
  return { hostId: row.hostId, record };
}
