import { sourceDigest, type JobRecord } from '../runtime/index.js';
import { digestOf } from '../store/index.js';
import type { TaskHandle } from '../kernel/index.js';
import type { FrontierDeps } from './work-options.js';
import { openPermissionRequests } from './permission-requests.js';
import { untilAborted } from './until-aborted.js';
import { parentLets, watchParent } from './branch.js';
import { retainEvidence } from './artifact-evidence.js';

/**
 * `observe_run`: waits for the job, keeps the receipt, checks the artifacts of the Assignment's
 * stage that this run changed against their contracts and retains the valid ones as evidence,
 * all in one commit. Aborted by a newer Assignment
 * generation, it cancels the fenced run. If the process dies before the commit, boot observes the
 * same job again.
 */
export async function observeRun(deps: FrontierDeps, task: TaskHandle, signal: AbortSignal): Promise<void> {
  const { context } = task;
  const dispatch = context.dispatch!;
  // A child whose parent moved on is cancelled (the cancel's commit stops this run).
  if (!(await parentLets(deps, task))) return;
  const unwatch = watchParent(deps, task);
  let job: JobRecord;
  try {
    job = await awaitJob(deps, task, signal);
  } finally {
    unwatch();
  }
  const workspace = await deps.workspaceOf(task);
  const receipt = job.harness?.receipt ?? missingReceipt(job, context.contextDigest!);
  deps.step(task, `run ${job.jobId} ended ${job.state} (${receipt.stopReason})`);
  // Escalated permission requests are asked before the run is observed, so none is lost to a crash
  // between the two: a boot that observes the job again finds them open under the same ids.
  await openPermissionRequests(deps, task, receipt);
  const changed = new Map((job.files?.changed ?? []).map((f) => [f.name, f.digest]));
  const { objects, blobs, claims, evidence, refused } = retainEvidence(deps, task, changed, workspace);
  deps.step(task, `evidence retained: ${Object.keys(evidence).join(', ') || 'none'}`);
  await task.send(
    {
      type: 'run.observe',
      generation: dispatch.generation,
      clientRequestId: dispatch.clientRequestId,
      contextDigest: context.contextDigest!,
      receiptDigest: digestOf({ kind: 'receipt', body: receipt }),
      jobStatus: job.state,
      evidence,
      ...(Object.keys(refused).length > 0 ? { refused } : {}),
      sourceDigest: await sourceDigest(workspace, { exclude: deps.artifactNames(task) }),
    },
    { objects: [{ kind: 'receipt', body: receipt }, ...objects], blobs, claims },
  );
}

/** Waits for the dispatched job to end; aborted by a newer Assignment generation or a cancel of the Task, cancels it. */
async function awaitJob(deps: FrontierDeps, task: TaskHandle, signal: AbortSignal): Promise<JobRecord> {
  const jobId = task.context.dispatch!.jobId!;
  try {
    return await untilAborted(deps.options.runtime.observe(jobId, { signal }), signal);
  } catch (error) {
    const why = signal.aborted ? (signal.reason as { code?: string })?.code : undefined;
    if (why === 'stale_assignment' || why === 'task_cancelled') {
      // Fenced by a newer Assignment (its result could only be retained as stale), or the Task was
      // cancelled: either way the run is of no use any more, so stop it.
      deps.step(
        task,
        `run ${jobId} ${why === 'task_cancelled' ? 'of a cancelled Task' : 'superseded by a newer generation'}: cancelling it`,
      );
      await deps.options.runtime.cancel(jobId).catch(() => undefined);
    }
    throw error;
  }
}

/** A receipt for a job that ended without a driver result (abandoned, executor failure). */
function missingReceipt(job: JobRecord, contextDigest: string) {
  const at = job.endedAt ?? job.updatedAt;
  return {
    driver: job.run.kind === 'harness' ? job.run.driver : ('command' as const),
    runId: job.clientRequestId,
    provider: { name: 'unknown' },
    contextDigest,
    jobId: job.jobId,
    artifacts: [],
    artifactRefusals: [],
    counts: { messages: 0, thoughts: 0, toolItemsStarted: 0, toolItemsCompleted: 0, protocolErrors: 0 },
    stopReason: job.state === 'abandoned' ? 'abandoned' : (job.error?.code ?? job.state),
    timings: {
      startedAt: job.startedAt ?? job.createdAt,
      endedAt: at,
      durationMs: Math.max(0, Date.parse(at) - Date.parse(job.startedAt ?? job.createdAt)),
    },
  };
}
