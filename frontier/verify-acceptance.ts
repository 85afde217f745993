import type { VerificationCause } from '../machines/index.js';
import type { TaskSpec } from '../objects/index.js';
import { FROZEN_TEST_MAX_BYTES } from '../drivers/confine.js';
import { readArtifact, sourceDigest, type JobRecord } from '../runtime/index.js';
import { digestOf } from '../store/index.js';
import { type TaskHandle, HostError } from '../kernel/index.js';
import { clientRequestId, jobOf, type FrontierDeps } from './work-options.js';
import { untilAborted } from './until-aborted.js';

/**
 * How many times a verification the Host stopped (its job `abandoned`: a crash, the Host running
 * it gone) is run again, each time under a request id of its own, before it counts as failed.
 */
export const VERIFY_RESTARTS = 5;

/**
 * `verify`: runs the acceptance command as a Runtime job (or finds the one already running under
 * its clientRequestId), recomputes the source digest and the frozen test digests on the Host, and
 * commits the verification — with the outcome only if all agree. If the process dies before the
 * commit, boot finds the same job by its clientRequestId and verifies again. A job the Host
 * stopped says nothing about the work: it is run again under the next request id of the series
 * (`…/verify`, `…/verify-2`, …), found again by each id after a crash, up to `VERIFY_RESTARTS`.
 */
export async function verifyAcceptance(deps: FrontierDeps, task: TaskHandle, signal: AbortSignal): Promise<void> {
  const { context } = task;
  const acceptance = task.spec.acceptance;
  const workspace = await deps.workspaceOf(task);
  const exclude = deps.artifactNames(task);
  if (!acceptance)
    throw new HostError('invalid_spec', `task ${task.taskId} declares no acceptance command; it cannot be verified`);
  let job: JobRecord;
  for (let restart = 0; ; restart++) {
    const jobId = await startVerification(deps, task, acceptance, workspace, exclude, restart);
    job = await untilAborted(deps.options.runtime.observe(jobId, { signal }), signal);
    if (job.state !== 'abandoned' || restart >= VERIFY_RESTARTS) break;
    deps.step(
      task,
      `verification ${job.clientRequestId} was stopped by the Host (${job.stopReason}): running it again`,
    );
  }
  const checked = await checkOnHost(job, acceptance, workspace, exclude);
  const { passed, hostDigest, frozenIntact } = checked;
  const verification = {
    taskId: task.taskId,
    generation: context.generation,
    jobId: job.jobId,
    exitCode: job.verification?.exitCode ?? null,
    passed,
    sourceDigest: hostDigest,
    frozenTestDigests: Object.fromEntries(
      Object.entries(checked.frozen).filter((e): e is [string, string] => e[1] !== undefined),
    ),
    frozenTestsIntact: frozenIntact,
  };
  const verificationDigest = digestOf({ kind: 'verification', body: verification });
  const objects: Array<{ kind: string; body: unknown }> = [{ kind: 'verification', body: verification }];
  let outcomeDigest: string | null = null;
  if (passed) {
    const outcome = outcomeOf(task, hostDigest, verificationDigest);
    objects.push({ kind: 'outcome', body: outcome });
    outcomeDigest = digestOf({ kind: 'outcome', body: outcome });
  }
  const causes = passed ? [] : failureCauses(checked);
  deps.step(
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
      ...(passed ? {} : { causes }),
    },
    { objects },
  );
}

type Acceptance = NonNullable<TaskSpec['acceptance']>;

/** Starts the acceptance command as a Runtime job, or finds the one already running under its clientRequestId (the `restart`-th of the series). */
async function startVerification(
  deps: FrontierDeps,
  task: TaskHandle,
  acceptance: Acceptance,
  workspace: string,
  exclude: string[],
  restart: number,
): Promise<string> {
  const { context } = task;
  const first = clientRequestId(task.taskId, context.attempt, context.generation, 'verify');
  const requestId = restart === 0 ? first : `${first}-${restart + 1}`;
  const jobId = await jobOf(deps, requestId, () =>
    deps.options.runtime.verify({
      clientRequestId: requestId,
      workspace,
      command: acceptance.command,
      args: acceptance.args,
      frozenTests: acceptance.frozenTests,
      sourceExclude: exclude,
      confinement: { network: acceptance.network ?? 'none', readable: [], writable: [] },
      timeoutMs: acceptance.timeoutMs,
    }),
  );
  deps.step(task, `acceptance verification running as ${requestId}`);
  return jobId;
}

/**
 * Recomputes the source digest and the frozen test digests on the Host; the job passed only if it
 * succeeded, the command passed, and the Runtime's digests agree with the Host's and the pinned ones.
 */
async function checkOnHost(job: JobRecord, acceptance: Acceptance, workspace: string, exclude: string[]) {
  const reported = job.verification;
  const hostDigest = await sourceDigest(workspace, { exclude });
  const { digests: frozen, codes: frozenCodes } = await frozenDigests(workspace, acceptance.frozenTests);
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
  return { job, pinned, frozen, frozenCodes, frozenTests: acceptance.frozenTests, hostDigest, frozenIntact, passed };
}

/** The outcome of a verification that passed: the evidence held, the source and the result. */
function outcomeOf(task: TaskHandle, hostDigest: string, verificationDigest: string) {
  const { context, spec } = task;
  const evidence = Object.fromEntries(Object.entries(context.evidence).map(([name, held]) => [name, held.digest]));
  return {
    taskId: task.taskId,
    attempt: context.attempt,
    generation: context.generation,
    evidence,
    sourceDigest: hostDigest,
    verification: verificationDigest,
    result: resultOf(task, evidence),
    ...(spec.result !== undefined ? { resultArtifact: spec.result } : {}),
  };
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

/** Characters of each output stream a failure keeps: enough for the failing assertion, bounded in the journal. */
const TAIL_CHARS = 1_000;

/**
 * What failed a verification, each cause the Host can name: every frozen test whose digest is not
 * the pinned one (as the Host reads it now, else as the Runtime read it before the command), the
 * command when it did not exit 0, and a source digest that moved while it ran or is not the Host's.
 * The command is named when nothing else is, so a failure never has no cause.
 */
function failureCauses(f: {
  job: JobRecord;
  pinned: Record<string, string>;
  frozen: Record<string, string | undefined>;
  frozenCodes: Record<string, string>;
  frozenTests: string[];
  hostDigest: string;
}): VerificationCause[] {
  const reported = f.job.verification;
  const causes: VerificationCause[] = [];
  for (const path of f.frozenTests) {
    const bound = f.pinned[path];
    if (bound === undefined) continue;
    const now = f.frozen[path];
    const before = reported?.frozenTestDigests[path] ?? null;
    if (now === bound && before === bound) continue;
    const current = now !== bound ? (now ?? null) : before;
    const code = now === undefined ? f.frozenCodes[path] : undefined;
    causes.push({ kind: 'frozen', path, bound, current, ...(code !== undefined ? { code } : {}) });
  }
  const command: VerificationCause = {
    kind: 'command',
    exitCode: reported?.exitCode ?? f.job.exitCode ?? null,
    jobState: f.job.state,
    stdout: (f.job.stdout?.tail ?? '').slice(-TAIL_CHARS),
    stderr: (f.job.stderr?.tail ?? '').slice(-TAIL_CHARS),
  };
  if (f.job.state !== 'succeeded' || command.exitCode !== 0) causes.push(command);
  if (reported && (reported.sourceDigest !== f.hostDigest || reported.sourceDigestAfter !== f.hostDigest))
    causes.push({
      kind: 'source',
      before: reported.sourceDigest,
      after: reported.sourceDigestAfter,
      host: f.hostDigest,
    });
  return causes.length > 0 ? causes : [command];
}

/** sha256 of each frozen test file as it is now, read through the workspace confinement, and the code of each read refused. */
async function frozenDigests(
  workspace: string,
  paths: string[],
): Promise<{ digests: Record<string, string | undefined>; codes: Record<string, string> }> {
  const digests: Record<string, string | undefined> = {};
  const codes: Record<string, string> = {};
  for (const path of paths) {
    const read = readArtifact(workspace, path, FROZEN_TEST_MAX_BYTES);
    digests[path] = read.ok ? read.value.digest : undefined;
    if (!read.ok) codes[path] = read.code;
  }
  return { digests, codes };
}
