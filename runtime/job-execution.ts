import type { DriverRunInput, SandboxSpec } from '../drivers/receipt.js';
import { runCommand, type CommandOutcome } from './command-job.js';
import { FROZEN_TEST_MAX_BYTES, readArtifact } from '../drivers/confine.js';
import type { CommandRun, VerifyInput } from './dispatch-input.js';
import { runHarness, type HarnessExecutor } from './harness-job.js';
import type { JobRecord, JobState, StopReason, Verification } from './job-record.js';
import { sourceDigest } from './source-digest.js';

/** Limits that apply to every job of one Runtime. */
export interface RuntimeLimits {
  reapTimeoutMs: number;
  captureCapBytes: number;
  tailBytes: number;
  maxWorkspaceEntries: number;
}

/** What one execution needs: its limits, the cancel signal and a hook that records `running`. */
export interface ExecutionContext {
  workspace: string;
  timeoutMs: number;
  graceMs: number;
  limits: RuntimeLimits;
  cancel: AbortSignal;
  onRunning: (process?: { pid: number; startTicks: number }) => void;
}

/** The fields a finished execution contributes to the terminal record. */
export type TerminalPatch = { state: JobState } & Partial<
  Pick<
    JobRecord,
    'exitCode' | 'signal' | 'stopReason' | 'groupGone' | 'stdout' | 'stderr' | 'harness' | 'verification' | 'error'
  >
>;

function stoppedState(reason: StopReason | undefined): JobState | undefined {
  if (reason === 'timeout') return 'timed_out';
  if (reason === 'cancel') return 'cancelled';
  if (reason === 'runtime_closed' || reason === 'executor_gone') return 'abandoned';
  return undefined;
}

function commandPatch(outcome: CommandOutcome): TerminalPatch {
  const state =
    stoppedState(outcome.stopReason) ??
    (outcome.error === undefined && outcome.exitCode === 0 ? 'succeeded' : 'failed');
  const patch: TerminalPatch = {
    state,
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    groupGone: outcome.groupGone,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
  };
  if (outcome.stopReason !== undefined) patch.stopReason = outcome.stopReason;
  if (outcome.error !== undefined) patch.error = outcome.error;
  return patch;
}

function launch(
  spec: { command: string; args: string[]; env: Record<string, string> },
  ctx: ExecutionContext,
  sandbox: SandboxSpec | undefined,
) {
  return runCommand(
    { command: spec.command, args: spec.args, env: spec.env, cwd: ctx.workspace, sandbox },
    { timeoutMs: ctx.timeoutMs, graceMs: ctx.graceMs, ...ctx.limits },
    ctx.cancel,
    (pid, startTicks) => ctx.onRunning({ pid, startTicks }),
  );
}

/** Runs a `command` job to its end. Never rejects for process failures (they are data). */
export async function executeCommand(
  run: CommandRun,
  ctx: ExecutionContext,
  sandbox: SandboxSpec | undefined,
): Promise<TerminalPatch> {
  return commandPatch(await launch(run, ctx, sandbox));
}

/** Runs a `harness` job through the injected executor; the job id is passed in the input. */
export async function executeHarness(
  executor: HarnessExecutor,
  input: DriverRunInput,
  ctx: ExecutionContext,
): Promise<TerminalPatch> {
  ctx.onRunning();
  const outcome = await runHarness(executor, input, { timeoutMs: ctx.timeoutMs, graceMs: ctx.graceMs }, ctx.cancel);
  const state = stoppedState(outcome.stopReason) ?? (outcome.result?.ok === true ? 'succeeded' : 'failed');
  const patch: TerminalPatch = { state };
  // The Runtime says whether it confined the run, whatever the executor reported.
  if (outcome.result?.receipt !== undefined) outcome.result.receipt.confined = input.confinedIn !== undefined;
  if (outcome.result !== undefined) patch.harness = outcome.result;
  if (outcome.stopReason !== undefined) patch.stopReason = outcome.stopReason;
  if (outcome.error !== undefined) patch.error = outcome.error;
  return patch;
}

function frozenDigests(workspace: string, paths: readonly string[]) {
  const digests: Record<string, string | null> = {};
  const refusals: Record<string, string> = {};
  for (const path of paths) {
    const read = readArtifact(workspace, path, FROZEN_TEST_MAX_BYTES);
    digests[path] = read.ok ? read.value.digest : null;
    if (!read.ok) refusals[path] = read.code;
  }
  return { digests, refusals };
}

/**
 * Runs an acceptance command and digests what it ran against: the source digest and frozen test
 * digests are taken before the command, and again after it. `passed` requires exit 0, every frozen
 * test readable, and both digests unchanged by the run.
 */
export async function executeVerify(
  spec: VerifyInput,
  ctx: ExecutionContext,
  sandbox: SandboxSpec | undefined,
): Promise<TerminalPatch> {
  const selection = { include: spec.sourceInclude, exclude: spec.sourceExclude };
  const before = await sourceDigest(ctx.workspace, selection);
  const frozen = frozenDigests(ctx.workspace, spec.frozenTests);
  const patch = commandPatch(await launch(spec, ctx, sandbox));
  const ran = patch.state === 'succeeded' || patch.state === 'failed';
  const after = ran ? await sourceDigest(ctx.workspace, selection) : null;
  const frozenAfter = frozenDigests(ctx.workspace, spec.frozenTests);
  const frozenIntact =
    Object.keys(frozen.refusals).length === 0 &&
    spec.frozenTests.every((path) => frozenAfter.digests[path] === frozen.digests[path]);
  const verification: Verification = {
    exitCode: patch.exitCode ?? null,
    passed: patch.state === 'succeeded' && patch.exitCode === 0 && frozenIntact && after === before,
    sourceDigest: before,
    sourceDigestAfter: after,
    frozenTestDigests: frozen.digests,
    frozenTestRefusals: frozen.refusals,
    confined: sandbox !== undefined,
  };
  return { ...patch, verification };
}
