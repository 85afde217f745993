import type pg from 'pg';
import { z } from 'zod';
import { StoreError } from '../errors.js';
import { queryOrFail } from './pg-pool.js';
import { storeErrorOf } from './stored.js';

/**
 * One row of `ordivon_jobs`: a Runtime job as its Host recorded it, the record read as JSON (the
 * Runtime parses it further). runtime/ names the same shape `JobRow`: store/ imports nothing of runtime/.
 */
export interface StoredJob {
  jobId: string;
  /** The Host whose Runtime ran the job. */
  hostId: string;
  record: unknown;
}

const JobRowText = z.object({ job_id: z.string(), host_id: z.string(), record: z.string() });

/** The Runtime jobs of every Host sharing the history (`ordivon_jobs`), for runtime/'s job registry. */
export class PgJobs {
  constructor(
    private readonly pool: pg.Pool,
    /** The Host stamped on the jobs it records first. */
    private readonly hostId: string,
  ) {}

  /**
   * Records a Runtime job (its record as JSON), stamped with this Host on first insert; `final`
   * marks a terminal record, which is never replaced afterwards (the first terminal write wins,
   * whichever Host makes it). Resolves with the row as stored after the call — another Host's
   * final record when one was there first. Throws `identity_conflict` (details: the job holding
   * it) when another job already holds `clientRequestId`: nothing written.
   */
  async putJob(
    jobId: string,
    clientRequestId: string,
    record: unknown,
    options: { final?: boolean } = {},
  ): Promise<StoredJob> {
    const details = { jobId, clientRequestId };
    try {
      const { rows } = await this.pool.query(
        `INSERT INTO ordivon_jobs (job_id, host_id, client_request_id, record, final) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (job_id) DO UPDATE SET record = EXCLUDED.record, final = EXCLUDED.final
           WHERE NOT ordivon_jobs.final AND ordivon_jobs.client_request_id = EXCLUDED.client_request_id
         RETURNING job_id, host_id, record`,
        [jobId, this.hostId, clientRequestId, JSON.stringify(record), options.final ?? false],
      );
      if (rows.length > 0) return jobRowOf(rows[0], details);
    } catch (error) {
      if ((error as { constraint?: string }).constraint === 'ordivon_jobs_request') {
        const holder = (await this.jobsByRequest(clientRequestId))[0];
        throw new StoreError('identity_conflict', `${clientRequestId} already names job ${holder?.jobId ?? '(gone)'}`, {
          ...details,
          holder: holder?.jobId,
        });
      }
      throw storeErrorOf(error, details);
    }
    const stored = await this.job(jobId);
    if (stored === undefined)
      throw new StoreError('record_corrupt', `job ${jobId} was neither written nor found`, details);
    return stored;
  }

  /** The jobs recorded under exactly `clientRequestId` (an equality lookup: never a prefix). */
  async jobsByRequest(clientRequestId: string): Promise<StoredJob[]> {
    const { rows } = await queryOrFail(
      this.pool,
      `SELECT job_id, host_id, record FROM ordivon_jobs WHERE client_request_id = $1 ORDER BY job_id`,
      [clientRequestId],
    );
    return rows.map((row) => jobRowOf(row, { clientRequestId }));
  }

  /** One job's row; undefined when no Host recorded it. */
  async job(jobId: string): Promise<StoredJob | undefined> {
    const { rows } = await queryOrFail(
      this.pool,
      `SELECT job_id, host_id, record FROM ordivon_jobs WHERE job_id = $1`,
      [jobId],
    );
    return rows.length === 0 ? undefined : jobRowOf(rows[0], { jobId });
  }
}

function jobRowOf(row: unknown, details: Record<string, unknown>): StoredJob {
  const parsed = JobRowText.safeParse(row);
  if (!parsed.success)
    throw new StoreError('record_corrupt', `a job row ${JSON.stringify(details)} is malformed`, details);
  const { job_id: jobId, host_id: hostId, record } = parsed.data;
  try {
    return { jobId, hostId, record: JSON.parse(record) as unknown };
  } catch {
    throw new StoreError('record_corrupt', `the record of job ${jobId} is not JSON`, { ...details, jobId });
  }
}
