import { StoreError } from '../store/index.js';
import { RuntimeError } from './errors.js';
import { isTerminal, type JobRecord } from './job-record.js';

/** A job as the registry holds it: the Host whose Runtime ran it, and its record (parsed by the Runtime). */
export interface RegistryJob {
  hostId: string;
  record: unknown;
}

/**
 * Where the Runtimes of several Hosts record their jobs (docs/many-hosts.md, "Jobs across
 * Hosts"), so a Host taking a Task over finds its dispatch by exact clientRequestId and learns
 * whether the Host that ran it is still alive. Calls reject with a `RuntimeError`:
 * `registry_unavailable` (retryable; a `put`'s outcome is then unknown), `record_corrupt`, or
 * `identity_conflict` from `put` when another job already holds the record's clientRequestId
 * (nothing written).
 */
export interface JobRegistry {
  /** This Host's name among the Hosts sharing the registry. */
  readonly hostId: string;
  /**
   * Records a job record (stamped with this Host on first write); a terminal record is never
   * replaced. Resolves with the job as stored after the call: another Host's terminal record when
   * it was there first.
   */
  put(record: JobRecord): Promise<RegistryJob>;
  /** Jobs recorded under exactly `clientRequestId`. */
  find(clientRequestId: string): Promise<RegistryJob[]>;
  get(jobId: string): Promise<RegistryJob | undefined>;
  /** Whether the Host's heartbeat is current; false for a Host that stopped or was never seen. */
  alive(hostId: string): Promise<boolean>;
}

/** A job as the shared database returns it: a registry job with its id. */
export interface JobRow extends RegistryJob {
  jobId: string;
}

/** What `sharedJobRegistry` needs of the shared database (`PgHistory` has it). */
export interface SharedJobs {
  readonly hostId: string;
  putJob(jobId: string, clientRequestId: string, record: unknown, options?: { final?: boolean }): Promise<JobRow>;
  jobsByRequest(clientRequestId: string): Promise<JobRow[]>;
  job(jobId: string): Promise<JobRow | undefined>;
  hostAlive(hostId: string): Promise<boolean>;
}

/**
 * A registry on the cluster's shared history (`ordivon_jobs`, `ordivon_hosts`). `shared` may
 * be a getter: a Host's Runtime opens before its Supervisor joins the cluster, so calls made
 * before then fail `registry_unavailable` (the Runtime puts those records again later).
 */
export function sharedJobRegistry(hostId: string, shared: SharedJobs | (() => SharedJobs | undefined)): JobRegistry {
  const use = async <T>(call: (jobs: SharedJobs) => Promise<T>): Promise<T> => {
    const open = typeof shared === 'function' ? shared() : shared;
    if (open === undefined)
      throw new RuntimeError('registry_unavailable', `host ${hostId} has not joined its cluster: no job registry yet`);
    try {
      return await call(open);
    } catch (error) {
      throw registryError(error);
    }
  };
  return {
    hostId,
    put: (record) =>
      use((j) => j.putJob(record.jobId, record.clientRequestId, record, { final: isTerminal(record.state) })),
    find: (clientRequestId) => use((j) => j.jobsByRequest(clientRequestId)),
    get: (jobId) => use((j) => j.job(jobId)),
    alive: (other) => use((j) => j.hostAlive(other)),
  };
}

/** A registry call's failure as the Runtime reports it: corrupt and conflicting rows keep their codes, anything else is `registry_unavailable`. */
export function registryError(error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof StoreError && (error.code === 'record_corrupt' || error.code === 'identity_conflict'))
    return new RuntimeError(error.code, `job registry: ${message}`, { cause: error });
  return new RuntimeError('registry_unavailable', `job registry: ${message}`, { cause: error });
}
