import { groupAlive, killJobSandboxes, ownsGroup, stopGroup, type MarkedSandboxes } from '../os/index.js';
import { executorAlive, isSameProcess } from './executor-identity.js';
import type { ExecutorIdentity, JobRecord } from './job-record.js';
import type { JobStore } from './job-store.js';

/** What one `recover()` pass did. */
export interface RecoveryReport {
  /** Jobs of dead executors, now terminal `abandoned`. */
  abandoned: JobRecord[];
  /** Jobs left alone because their executor is alive (this process or another live Runtime). */
  skipped: Array<{ jobId: string; executorId: string }>;
  /** Active-index entries whose record could not be read. */
  corrupt: Array<{ jobId: string; detail: string }>;
}

/** True when the job's executor is another process that is provably gone. */
export function ownerGone(record: JobRecord, self: ExecutorIdentity): boolean {
  return !isSameProcess(record.executor, self) && !executorAlive(record.executor, self);
}

/**
 * Kills what is left of an orphaned job's process group, then records the job `abandoned` (no exit
 * code, `stopReason: 'executor_gone'`) durably. The group is killed only when it is provably the
 * job's: its leader still has the recorded start time, or the leader is gone but the group lives on
 * (Linux never hands out a pid still in use as a process-group id). Then every sandbox that carries
 * the job's id is killed too (`killJobSandboxes`): the executor may have died before it recorded the
 * process, or early in bwrap's setup, when the sandbox does not yet die with its parent. If this
 * process dies between the kill and the write, the next recovery finds them gone and writes the
 * record.
 */
export async function abandonOrphan(
  store: JobStore,
  record: JobRecord,
  options: { now: () => string; reapTimeoutMs: number; marked?: MarkedSandboxes },
): Promise<JobRecord> {
  let groupGone = true;
  if (record.process !== undefined) {
    const leader = record.process;
    // SIGKILL at once, no grace: the executor that would have stopped the job politely is dead.
    // Then the same wait as a running job's stop (command-job.ts), for the same `groupGone`.
    if (ownsGroup(leader) && groupAlive(leader.pid))
      groupGone = (await stopGroup(leader, { until: 'reaped', reapTimeoutMs: options.reapTimeoutMs })).gone;
  }
  const sandboxes = await killJobSandboxes(record.jobId, options.reapTimeoutMs, options.marked);
  groupGone &&= sandboxes.gone;
  const at = options.now();
  const updated = store.updateJob(record.jobId, (current) => ({
    ...current,
    state: 'abandoned',
    exitCode: null,
    signal: null,
    stopReason: 'executor_gone',
    groupGone,
    endedAt: at,
    updatedAt: at,
  }));
  await store.flushed();
  return updated;
}
