import { basename } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LEFTOVER_POLL_MS, groupLeader, spawnGroup, stopGroup, type GroupStop } from '../../os/index.js';
import { collectArtifacts } from '../artifacts.js';
import { describeThrown, driverFailure } from '../failures.js';
import type { DriverResult, DriverRunInput, HarnessRunReceipt } from '../receipt.js';
import { startRunLimits } from '../run-deadline.js';
import { OutputTail } from './output-tail.js';

/** Bytes of stdout kept (a tail) whatever the child prints. */
export const STDOUT_TAIL_BYTES = 64 * 1024;
/** Bytes of stderr kept for failure details. */
export const STDERR_TAIL_BYTES = 16 * 1024;
/** Characters of the final stdout line reported as `finalText`. */
export const FINAL_TEXT_MAX_CHARS = 4096;
/** Env entry that names the provider in the receipt instead of the command's basename. */
export const PROVIDER_NAME_ENV = 'ORDIVON_PROVIDER_NAME';

type EndReason = 'exited' | 'timeout' | 'heartbeat' | 'aborted';

/** Bound on waiting for a SIGKILLed group to stop running. */
const KILL_WAIT_MS = 2_000;

/**
 * Runs any executable as a harness: the prompt goes to its stdin, its cwd is the workspace, and
 * it runs as the leader of its own process group with exactly `input.env`.
 *
 * Failure semantics: resolves, never rejects. The child ending by itself (any exit code or
 * signal) is `ok: true` with stop reason `exited` — an exit code is evidence for the Host, not a
 * verdict. `input.timeoutMs` elapsing, `input.heartbeatMs` passing without a byte on stdout or
 * stderr (the child's progress), or `signal` firing stops the whole group (SIGTERM, then SIGKILL
 * after `input.graceMs`) and yields `timeout` / `timeout` / `aborted` (code `command_timeout` /
 * `heartbeat_timeout` / `command_aborted`) with the receipt observed so far. A process that cannot be started yields
 * `spawn_failed` (`command_spawn_failed`). Group members left behind by a child
 * that exited are stopped the same way before this resolves.
 *
 * Receipt: provider name = `env.ORDIVON_PROVIDER_NAME` or the command's basename; `counts.messages`
 * = non-empty stdout lines, other counts 0; `finalText` = last non-empty stdout line (≤ 4096 chars,
 * from a 64 KiB tail); `usage` = `{ stdoutBytes, stdoutLines, stderrBytes }`.
 */
export async function runCommand(input: DriverRunInput, signal: AbortSignal): Promise<DriverResult> {
  const startedAt = new Date();
  const t0 = performance.now();
  const stdout = new OutputTail(STDOUT_TAIL_BYTES);
  const stderr = new OutputTail(STDERR_TAIL_BYTES);
  const receipt = (stopReason: string, extra: Partial<HarnessRunReceipt> = {}): HarnessRunReceipt =>
    buildReceipt(input, startedAt, t0, stdout, stderr, stopReason, extra);

  if (signal.aborted)
    return driverFailure('aborted', 'command_aborted', 'aborted before the command was started', {
      receipt: receipt('aborted'),
    });

  const spawned = spawnCommand(input, receipt);
  if ('failure' in spawned) return spawned.failure;
  const { child } = spawned;
  const pid = child.pid;
  if (pid === undefined) return startedWithoutPid(input, child, receipt);

  // Read before the child can be reaped: the stop below signals this group only while it is still its.
  const leader = groupLeader(pid, child);
  // Any byte the child writes is progress for the heartbeat (the limits start below, before any can arrive).
  const heartbeat = { progress: (): void => undefined };
  pipeChild(child, input.prompt, stdout, stderr, heartbeat);
  const { result, reason, stop } = await awaitEnd(input, signal, child, leader, heartbeat);

  const exit = {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
  };
  if (reason === 'exited' || reason === undefined) return { ok: true, receipt: receipt('exited', exit) };

  const detail = stoppedDetail(input, signal, reason, stop, pid, stderr);
  if (reason === 'heartbeat')
    return driverFailure('timeout', 'heartbeat_timeout', detail, { receipt: receipt('heartbeat_timeout', exit) });
  return driverFailure(reason, `command_${reason}`, detail, { receipt: receipt(reason, exit) });
}

type Child = ReturnType<typeof spawnGroup>;
type ReceiptOf = (stopReason: string, extra?: Partial<HarnessRunReceipt>) => HarnessRunReceipt;

function spawnCommand(input: DriverRunInput, receipt: ReceiptOf): { child: Child } | { failure: DriverResult } {
  try {
    return {
      child: spawnGroup(input.command, input.args, { cwd: input.cwd, env: input.env, sandbox: input.confinedIn }),
    };
  } catch (error) {
    return {
      failure: driverFailure(
        'spawn_failed',
        'command_spawn_failed',
        `cannot start ${input.command}: ${describeThrown(error)}`,
        {
          receipt: receipt('spawn_failed'),
        },
      ),
    };
  }
}

/** A child without a pid never ran: its settled result says why. */
async function startedWithoutPid(input: DriverRunInput, child: Child, receipt: ReceiptOf): Promise<DriverResult> {
  const result = await child;
  const why = result.originalMessage || result.shortMessage || 'no pid';
  return driverFailure(
    'spawn_failed',
    'command_spawn_failed',
    `cannot start ${input.command} in ${input.cwd}: ${why}`,
    {
      receipt: receipt('spawn_failed'),
    },
  );
}

/** Keeps the tails of the child's output, counting each chunk as progress, and writes the prompt to its stdin. */
function pipeChild(
  child: Child,
  prompt: string,
  stdout: OutputTail,
  stderr: OutputTail,
  heartbeat: { progress: () => void },
): void {
  // spawnGroup pipes all three streams; the optional chaining only satisfies execa's wide type.
  child.stdout?.on('data', (chunk: Buffer) => {
    heartbeat.progress();
    stdout.push(chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    heartbeat.progress();
    stderr.push(chunk);
  });
  // A child that never reads stdin closes the pipe under us (EPIPE): that is its right.
  child.stdin?.on('error', () => undefined);
  child.stdin?.end(prompt);
}

/**
 * Waits for the child to settle; the first of its exit, the run's limits and `signal` decides
 * why the run ended, and any but an exit stops the group.
 */
async function awaitEnd(
  input: DriverRunInput,
  signal: AbortSignal,
  child: Child,
  leader: ReturnType<typeof groupLeader>,
  heartbeat: { progress: () => void },
): Promise<{ result: Awaited<Child>; reason: EndReason | undefined; stop: GroupStop }> {
  let reason: EndReason | undefined;
  let stopping: Promise<GroupStop> | undefined;
  const end = (why: EndReason): void => {
    if (reason !== undefined) return;
    reason = why;
    // The grace ends when the leader has exited and its pipes closed (`child` settled); then waits
    // only until nothing of the group runs, not until init reaps it: the run's result is due once
    // the tree is dead, and an init that never reaps orphans would hold it to the bound every time.
    stopping = stopGroup(leader, {
      graceMs: input.graceMs,
      settled: child,
      until: 'stopped',
      reapTimeoutMs: KILL_WAIT_MS,
      pollMs: LEFTOVER_POLL_MS,
    }).then((report) => report.stop);
  };
  const limits = startRunLimits(input, (limit) => end(limit));
  heartbeat.progress = limits.progress;
  const onAbort = (): void => end('aborted');
  signal.addEventListener('abort', onAbort, { once: true });
  // The leader exiting ends the run; members it left behind (holding our pipes or not) are stopped.
  child.once('exit', () => end('exited'));

  const result = await child;
  limits.clear();
  signal.removeEventListener('abort', onAbort);
  const stop = await (stopping ?? Promise.resolve<GroupStop>('gone'));
  return { result, reason, stop };
}

function stoppedDetail(
  input: DriverRunInput,
  signal: AbortSignal,
  reason: Exclude<EndReason, 'exited'>,
  stop: GroupStop,
  pid: number,
  stderr: OutputTail,
): string {
  const how =
    stop === 'killed'
      ? `SIGTERM, then SIGKILL after ${input.graceMs} ms grace`
      : stop === 'terminated'
        ? 'SIGTERM'
        : 'already gone';
  const stderrTail = stderr.lastLine(500);
  const what =
    reason === 'timeout'
      ? `${input.command} did not exit within ${input.timeoutMs} ms`
      : reason === 'heartbeat'
        ? `${input.command} printed nothing for ${input.heartbeatMs} ms`
        : `${input.command} was aborted${signal.reason !== undefined ? ` (${describeThrown(signal.reason)})` : ''}`;
  return `${what}; process group ${pid} stopped (${how})${stderrTail !== undefined ? `; stderr: ${stderrTail}` : ''}`;
}

function buildReceipt(
  input: DriverRunInput,
  startedAt: Date,
  t0: number,
  stdout: OutputTail,
  stderr: OutputTail,
  stopReason: string,
  extra: Partial<HarnessRunReceipt>,
): HarnessRunReceipt {
  const { artifacts, artifactRefusals } = collectArtifacts(input);
  const receipt: HarnessRunReceipt = {
    driver: input.driver,
    runId: input.runId,
    provider: { name: input.env[PROVIDER_NAME_ENV] ?? basename(input.command) },
    contextDigest: input.contextDigest,
    artifacts,
    artifactRefusals,
    usage: { stdoutBytes: stdout.bytes, stdoutLines: stdout.lines, stderrBytes: stderr.bytes },
    counts: { messages: stdout.lines, thoughts: 0, toolItemsStarted: 0, toolItemsCompleted: 0, protocolErrors: 0 },
    stopReason,
    timings: {
      startedAt: startedAt.toISOString(),
      endedAt: new Date().toISOString(),
      durationMs: performance.now() - t0,
    },
    ...extra,
  };
  if (input.model !== undefined) receipt.model = input.model;
  if (input.jobId !== undefined) receipt.jobId = input.jobId;
  const finalText = stdout.lastLine(FINAL_TEXT_MAX_CHARS);
  if (finalText !== undefined) receipt.finalText = finalText;
  return receipt;
}
