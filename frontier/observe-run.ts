import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { readArtifact, sourceDigest, type JobRecord } from '../runtime/index.js';
import { digestOf } from '../store/index.js';
import { checkArtifact, contractLabel } from '../objects/index.js';
import { ARTIFACT_UNREADABLE } from '../drivers/artifacts.js';
import type { ArtifactRefusal, ArtifactRefusalCode } from '../machines/index.js';
import { type TaskHandle, assignedStage } from '../kernel/index.js';
import type { FrontierDeps } from './work-options.js';
import { openPermissionRequests } from './permission-requests.js';
import { untilAborted } from './until-aborted.js';

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
  let job: JobRecord;
  try {
    job = await untilAborted(deps.options.runtime.observe(dispatch.jobId!, { signal }), signal);
  } catch (error) {
    if (signal.aborted && (signal.reason as { code?: string })?.code === 'stale_assignment') {
      // Fenced by a newer Assignment: its result could only be retained as stale, so stop it.
      deps.step(task, `run ${dispatch.jobId} superseded by a newer generation: cancelling it`);
      await deps.options.runtime.cancel(dispatch.jobId!).catch(() => undefined);
    }
    throw error;
  }
  const workspace = await deps.workspaceOf(task);
  const receipt = job.harness?.receipt ?? missingReceipt(job, context.contextDigest!);
  deps.step(task, `run ${job.jobId} ended ${job.state} (${receipt.stopReason})`);
  // Escalated permission requests are asked before the run is observed, so none is lost to a crash
  // between the two: a boot that observes the job again finds them open under the same ids.
  await openPermissionRequests(deps, task, receipt);
  const changed = new Map((job.files?.changed ?? []).map((f) => [f.name, f.digest]));
  const objects: Array<{ kind: string; body: unknown }> = [{ kind: 'receipt', body: receipt }];
  const blobs: Buffer[] = [];
  const claims: Array<{ kind: 'evidence'; key: string }> = [];
  const evidence: Record<string, string> = {};
  const refused: Record<string, ArtifactRefusal> = {};
  const refuse = (name: string, code: ArtifactRefusalCode, why: string) => {
    refused[name] = { code, detail: why.slice(0, 2_000) };
    deps.step(task, `${name} not retained: ${code}: ${why}`);
  };
  const produces = new Set(assignedStage(task).produces);
  for (const required of task.spec.requiredArtifacts) {
    // Only what this run produced, of what its stage is to produce, counts as its evidence.
    if (!produces.has(required.name)) continue;
    if (!changed.has(required.name)) {
      // The Runtime lists changed files and symlinks; a FIFO, socket or device the run left under
      // an artifact's name is refused here rather than passed over in silence.
      if (isSpecialFile(join(workspace, required.name))) {
        const read = readArtifact(workspace, required.name, deps.options.maxArtifactBytes ?? 1 << 20);
        if (!read.ok) refuse(required.name, read.code, read.detail);
      }
      continue;
    }
    let read: ReturnType<typeof readArtifact>;
    try {
      read = readArtifact(workspace, required.name, deps.options.maxArtifactBytes ?? 1 << 20);
    } catch (error) {
      // As the receipt names a read that threw (drivers/artifacts.ts): the run's other artifacts still count.
      refuse(required.name, ARTIFACT_UNREADABLE, (error as Error).message);
      continue;
    }
    if (!read.ok) {
      refuse(required.name, read.code, read.detail);
      continue;
    }
    if (read.value.digest !== changed.get(required.name)) {
      // The bytes must be the ones the Runtime saw when the run ended, not a later edit.
      refuse(
        required.name,
        'artifact_changed',
        `${read.value.digest} now; the run ended with ${changed.get(required.name)}`,
      );
      continue;
    }
    const contract = contractLabel(required);
    const checked = checkArtifact(required, read.value.bytes, deps.options.artifactContracts);
    if (!checked.ok) {
      refuse(required.name, checked.code, `${contract}: ${checked.detail}`);
      continue;
    }
    const body = {
      taskId: task.taskId,
      generation: context.generation,
      name: required.name,
      schema: contract,
      digest: read.value.digest,
      bytes: read.value.bytes.length,
    };
    objects.push({ kind: 'evidence', body });
    claims.push({ kind: 'evidence', key: digestOf({ kind: 'evidence', body }) });
    blobs.push(read.value.bytes);
    evidence[required.name] = read.value.digest;
  }
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
    { objects, blobs, claims },
  );
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

/** A FIFO, socket or device node (never followed: a symlink is not one). */
function isSpecialFile(path: string): boolean {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  return stat !== undefined && (stat.isFIFO() || stat.isSocket() || stat.isCharacterDevice() || stat.isBlockDevice());
}
