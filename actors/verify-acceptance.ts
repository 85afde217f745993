import { readArtifact, sourceDigest } from '../runtime/index.js';
import { digestOf } from '../store/index.js';
import type { TaskHandle } from './effects.js';
import { HostError } from './errors.js';
import { clientRequestId, jobOf, type HostEffectContext } from './host-effects-options.js';
import { untilAborted } from './until-aborted.js';

/**
 * `verify`: runs the acceptance command as a Runtime job (or finds the one already running under
 * its clientRequestId), recomputes the source digest and the frozen test digests on the Host, and
 * commits the verification — with the outcome only if all agree. If the process dies before the
 * commit, boot finds the same job by its clientRequestId and verifies again.
 */
export async function verifyAcceptance(ctx: HostEffectContext, task: TaskHandle, signal: AbortSignal): Promise<void> {
  const { context, spec } = task;
  const acceptance = spec.acceptance;
  const workspace = await ctx.workspaceOf(task);
  const exclude = ctx.artifactNames(task);
  if (!acceptance)
    throw new HostError('invalid_spec', `task ${task.taskId} declares no acceptance command; it cannot be verified`);
  const requestId = clientRequestId(task.taskId, context.attempt, context.generation, 'verify');
  const jobId = await jobOf(ctx, requestId, () =>
    ctx.options.runtime.verify({
      clientRequestId: requestId,
      workspace,
      command: acceptance.command,
      args: acceptance.args,
      frozenTests: acceptance.frozenTests,
      sourceExclude: exclude,
      timeoutMs: acceptance.timeoutMs,
    }),
  );
  ctx.step(task, `acceptance verification running as ${requestId}`);
  const job = await untilAborted(ctx.options.runtime.observe(jobId, { signal }), signal);
  const reported = job.verification;
  const hostDigest = await sourceDigest(workspace, { exclude });
  const frozen = await frozenDigests(workspace, acceptance.frozenTests);
  const pinned = acceptance.frozenTestDigests ?? {};
  const frozenIntact = acceptance.frozenTests.every(
    (t) => frozen[t] !== undefined && frozen[t] === pinned[t] && reported?.frozenTestDigests[t] === pinned[t],
  );
  const passed =
    job.state === 'succeeded' &&
    reported?.passed === true &&
    reported.sourceDigest === hostDigest &&
    reported.sourceDigestAfter === hostDigest &&
    frozenIntact;
  const verification = {
    taskId: task.taskId,
    generation: context.generation,
    jobId: job.jobId,
    exitCode: reported?.exitCode ?? null,
    passed,
    sourceDigest: hostDigest,
    frozenTestDigests: Object.fromEntries(
      Object.entries(frozen).filter((e): e is [string, string] => e[1] !== undefined),
    ),
    frozenTestsIntact: frozenIntact,
  };
  const verificationDigest = digestOf({ kind: 'verification', body: verification });
  const objects: Array<{ kind: string; body: unknown }> = [{ kind: 'verification', body: verification }];
  let outcomeDigest: string | null = null;
  if (passed) {
    const evidence = Object.fromEntries(Object.entries(context.evidence).map(([name, held]) => [name, held.digest]));
    const outcome = {
      taskId: task.taskId,
      attempt: context.attempt,
      generation: context.generation,
      evidence,
      sourceDigest: hostDigest,
      verification: verificationDigest,
      result: resultOf(task, evidence),
      ...(spec.result !== undefined ? { resultArtifact: spec.result } : {}),
    };
    objects.push({ kind: 'outcome', body: outcome });
    outcomeDigest = digestOf({ kind: 'outcome', body: outcome });
  }
  ctx.step(
    task,
    passed
      ? `verification passed (exit ${verification.exitCode}, source ${hostDigest.slice(0, 19)}…)`
      : `verification failed (exit ${verification.exitCode}, frozen tests intact: ${frozenIntact})`,
  );
  await task.send(
    {
      type: 'verification.record',
      generation: context.generation,
      passed,
      verificationDigest,
      sourceDigest: hostDigest,
      outcomeDigest,
    },
    { objects },
  );
}

/**
 * The outcome's `result`: the spec's result artifact as held (JSON parsed, text as text, a file as
 * null: its digest is in the outcome's evidence); null when the spec names none.
 */
function resultOf(task: TaskHandle, evidence: Record<string, string>): unknown {
  const artifact = task.spec.requiredArtifacts.find((a) => a.name === task.spec.result);
  const digest = artifact && evidence[artifact.name];
  if (!artifact || !digest || artifact.kind === 'file') return null;
  const text = task.store.getBlob(digest).toString('utf8');
  return artifact.kind === 'text' ? text : JSON.parse(text);
}

/** sha256 of each frozen test file as it is now, read through the workspace confinement. */
async function frozenDigests(workspace: string, paths: string[]): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const path of paths) {
    const read = readArtifact(workspace, path, 16 << 20);
    out[path] = read.ok ? read.value.digest : undefined;
  }
  return out;
}
