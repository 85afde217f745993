import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { enterEnvGate } from '../store/env-gate.js';
import { RuntimeError, parseError } from './errors.js';
import { JobRecord, RUNTIME_FORMAT, isTerminal } from './job-record.js';

type IndexKey = [string, string] | [string, string, string];

/** Upper bound for the last element of an index key; job ids are ASCII (see `JobId`). */
const KEY_END = '\uffff';

/**
 * The Runtime's own LMDB environment, `<root>/runtime.lmdb` (never the Host's store), with three
 * databases:
 *
 * | db | key | value |
 * |---|---|---|
 * | `jobs` | jobId | `JobRecord` (msgpack), parsed with zod on every read |
 * | `index` | `['request', clientRequestId, jobId]` | `true` — exact-id lookup is one range scan |
 * | `index` | `['active', jobId]` | `true` while the job is not terminal — recovery scans only these |
 * | `meta` | `'format'` | `RUNTIME_FORMAT` |
 *
 * Writes are synchronous transactions (so check-and-insert is atomic across processes, LMDB
 * serialises writers); callers make them durable with `await store.flushed()`, because with
 * lmdb's default `overlappingSync` a commit is visible before it is on disk.
 */
export class JobStore {
  readonly path: string;
  private readonly env: RootDatabase;
  private readonly jobs: Database<unknown, string>;
  private readonly index: Database<true, IndexKey>;

  private constructor(path: string, env: RootDatabase) {
    this.path = path;
    this.env = env;
    this.jobs = env.openDB<unknown, string>({ name: 'jobs' });
    this.index = env.openDB<true, IndexKey>({ name: 'index' });
  }

  /**
   * Opens (creating when absent) `<root>/runtime.lmdb`. Fails with `store_open_failed` when LMDB
   * cannot open the file and `format_unknown` when it was written by another format version.
   */
  static open(root: string): JobStore {
    const path = join(root, 'runtime.lmdb');
    let env: RootDatabase;
    try {
      mkdirSync(root, { recursive: true });
      // Opens and closes of one environment must not overlap across processes (backup reads it beside a Host).
      const leave = enterEnvGate(path);
      try {
        env = open({ path, maxDbs: 8 });
      } finally {
        leave();
      }
    } catch (cause) {
      throw new RuntimeError('store_open_failed', `cannot open ${path}: ${(cause as Error).message}`, { cause });
    }
    const meta = env.openDB<unknown, string>({ name: 'meta' });
    const format = env.transactionSync(() => {
      const found = meta.get('format');
      if (found === undefined) meta.putSync('format', RUNTIME_FORMAT);
      return found ?? RUNTIME_FORMAT;
    });
    if (format !== RUNTIME_FORMAT) {
      const leave = enterEnvGate(path);
      void env.close().finally(leave);
      throw new RuntimeError(
        'format_unknown',
        `${path} has format ${JSON.stringify(format)}; this Runtime reads ${RUNTIME_FORMAT}`,
      );
    }
    return new JobStore(path, env);
  }

  /** Reads and parses one job; `undefined` when absent, `record_corrupt` when the bytes do not parse. */
  getJob(jobId: string): JobRecord | undefined {
    let raw: unknown;
    try {
      raw = this.jobs.get(jobId);
    } catch (cause) {
      throw new RuntimeError('record_corrupt', `job ${jobId} cannot be decoded: ${(cause as Error).message}`, {
        cause,
      });
    }
    if (raw === undefined) return undefined;
    return parseRecord(jobId, raw);
  }

  /** Job ids indexed under exactly `clientRequestId`, in key order. One range scan, O(log n + k). */
  findJobIds(clientRequestId: string): string[] {
    const ids: string[] = [];
    for (const key of this.index.getKeys({
      start: ['request', clientRequestId],
      end: ['request', clientRequestId, KEY_END],
    })) {
      const jobId = key[2];
      if (jobId !== undefined) ids.push(jobId);
    }
    return ids;
  }

  /** Records indexed under exactly `clientRequestId`. An index entry without its record is `record_corrupt`. */
  findJobs(clientRequestId: string): JobRecord[] {
    return this.findJobIds(clientRequestId).map((jobId) => {
      const record = this.getJob(jobId);
      if (record === undefined)
        throw new RuntimeError(
          'record_corrupt',
          `index names job ${jobId} for ${clientRequestId} but the job record is missing`,
        );
      return record;
    });
  }

  /** Ids of every job not yet terminal (the recovery frontier), without scanning terminal jobs. */
  activeJobIds(): string[] {
    const ids: string[] = [];
    for (const key of this.index.getKeys({ start: ['active', ''], end: ['active', KEY_END] })) {
      if (key[1] !== undefined) ids.push(key[1]);
    }
    return ids;
  }

  /**
   * Inserts a new job unless its clientRequestId is already indexed, in one LMDB write transaction;
   * false when it is (read the indexed job with `findJobs`, which checks its record).
   * Not durable on return: await `flushed()` before acting on it.
   */
  createJob(record: JobRecord): boolean {
    return this.write(() =>
      this.env.transactionSync(() => {
        if (this.findJobIds(record.clientRequestId).length > 0) return false;
        this.writeRecord(record);
        return true;
      }),
    );
  }

  /**
   * Replaces a job record with `next(current)` in one transaction. A terminal record is never
   * replaced (first terminal write wins, even across processes): the stored record is returned.
   * Not durable on return: await `flushed()`.
   */
  updateJob(jobId: string, next: (current: JobRecord) => JobRecord): JobRecord {
    return this.write(() =>
      this.env.transactionSync(() => {
        const current = this.getJob(jobId);
        if (current === undefined) throw new RuntimeError('job_not_found', `job ${jobId} is not in ${this.path}`);
        if (isTerminal(current.state)) return current;
        const updated = next(current);
        this.writeRecord(updated);
        return updated;
      }),
    );
  }

  /**
   * Deletes a job that never ran: its record and index entries, in one transaction. Only for a job
   * whose `starting` record the job registry refused because another Host's job holds its
   * clientRequestId (nothing was spawned, and no listener heard of it). Not durable on return.
   */
  removeJob(jobId: string): void {
    this.write(() =>
      this.env.transactionSync(() => {
        const record = this.getJob(jobId);
        if (record === undefined) return;
        this.jobs.removeSync(jobId);
        this.index.removeSync(['request', record.clientRequestId, jobId]);
        this.index.removeSync(['active', jobId]);
      }),
    );
  }

  /**
   * Low-level bulk insert, for benchmarks and for tests that simulate corruption (two jobs under one
   * clientRequestId). Writes exactly what `dispatch` writes for a record — the record, its
   * `['request', …]` entry and, when not terminal, its `['active', …]` entry — but skips the
   * duplicate check. All records go in one transaction. Never used by the Runtime itself.
   */
  insertUnchecked(records: readonly JobRecord[]): void {
    this.write(() =>
      this.env.transactionSync(() => {
        for (const record of records) {
          const parsed = JobRecord.safeParse(record);
          if (!parsed.success)
            throw parseError('record_corrupt', parsed.error, `refusing to write job ${record.jobId}`);
          this.writeRecord(parsed.data);
        }
      }),
    );
  }

  /** Test-only: stores an arbitrary value as job `jobId` (no index entry), to simulate a corrupt record. */
  putRawUnchecked(jobId: string, value: unknown): void {
    this.write(() => this.jobs.putSync(jobId, value));
  }

  /** Resolves when every commit made so far is flushed to disk. */
  async flushed(): Promise<void> {
    await this.env.flushed;
  }

  /** Waits for pending writes, then closes the environment (holding its open/close gate). */
  async close(): Promise<void> {
    await this.env.flushed;
    const leave = enterEnvGate(this.path);
    try {
      await this.env.close();
    } finally {
      leave();
    }
  }

  private writeRecord(record: JobRecord): void {
    this.jobs.putSync(record.jobId, record);
    this.index.putSync(['request', record.clientRequestId, record.jobId], true);
    if (isTerminal(record.state)) this.index.removeSync(['active', record.jobId]);
    else this.index.putSync(['active', record.jobId], true);
  }

  private write<T>(action: () => T): T {
    try {
      return action();
    } catch (cause) {
      if (cause instanceof RuntimeError) throw cause;
      throw new RuntimeError('store_write_failed', `write to ${this.path} failed: ${(cause as Error).message}`, {
        cause,
      });
    }
  }
}

function parseRecord(jobId: string, raw: unknown): JobRecord {
  const parsed = JobRecord.safeParse(raw);
  if (!parsed.success) throw parseError('record_corrupt', parsed.error, `job ${jobId}`);
  if (parsed.data.jobId !== jobId)
    throw new RuntimeError('record_corrupt', `job ${jobId} holds the record of ${parsed.data.jobId}`);
  return parsed.data;
}
