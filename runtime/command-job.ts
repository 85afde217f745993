import {
  groupAlive,
  groupLeader,
  spawnGroup,
  stopGroup,
  SandboxRefused,
  type GroupLeader,
  type Sandbox,
} from '../os/index.js';
import type { OutputEvidence, StopReason } from './job-record.js';
import { OutputCapture } from './output-capture.js';

export interface CommandLimits {
  timeoutMs: number;
  graceMs: number;
  reapTimeoutMs: number;
  captureCapBytes: number;
  tailBytes: number;
}

export interface CommandSpec {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd: string;
  /** The sandbox it runs in; undefined: unconfined. */
  sandbox?: Sandbox | undefined;
}

/** What became of one command process and its group, as plain data. */
export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  stdout: OutputEvidence;
  stderr: OutputEvidence;
  groupGone: boolean;
  stopReason?: StopReason;
  error?: { code: string; detail: string };
}

/**
 * Runs `spec` as the leader of a new process group and resolves when the leader has exited and the
 * group is gone (or `reapTimeoutMs` passed). Never rejects: spawn failures come back as
 * `error.code = 'spawn_failed'`.
 *
 * - `timeoutMs` after spawn, or when `cancel` aborts (its `reason` must be a `StopReason`), the
 *   group gets SIGTERM, then SIGKILL after `graceMs`.
 * - When the leader exits on its own while other processes of its group still run, those stragglers
 *   are stopped the same way: a job is its whole process tree.
 * - `onSpawn(pid, startTicks)` is called synchronously right after the process started.
 *
 * The environment is exactly `spec.env`, plus `PATH` from this process when `spec.env` has none.
 */
export async function runCommand(
  spec: CommandSpec,
  limits: CommandLimits,
  cancel: AbortSignal,
  onSpawn: (pid: number, startTicks: number) => void,
): Promise<CommandOutcome> {
  const stdout = new OutputCapture(limits.captureCapBytes, limits.tailBytes);
  const stderr = new OutputCapture(limits.captureCapBytes, limits.tailBytes);
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...spec.env };
  let subprocess: ReturnType<typeof spawnGroup>;
  try {
    subprocess = spawnGroup(spec.command, spec.args, { cwd: spec.cwd, env, sandbox: spec.sandbox });
  } catch (error) {
    // Nothing started: a sandbox that would show a hidden path, or a command it cannot run.
    const code = error instanceof SandboxRefused ? error.code : 'spawn_failed';
    const empty = stdout.evidence();
    const detail = error instanceof Error ? error.message : String(error);
    return { exitCode: null, signal: null, stdout: empty, stderr: empty, groupGone: true, error: { code, detail } };
  }
  subprocess.stdin?.end();
  stdout.attach(subprocess.stdout);
  stderr.attach(subprocess.stderr);
  const pid = subprocess.pid;

  let stopReason: StopReason | undefined;
  let stopping: Promise<boolean> | undefined;
  // The grace ends once nothing of the group runs (polled, not on the leader's exit: stragglers are
  // part of the job), and the wait is until the group is reaped, because that is what the job
  // record's `groupGone` states: no process of the group, not even a zombie, was left.
  const stopTree = (leader: GroupLeader): Promise<boolean> =>
    stopGroup(leader, { graceMs: limits.graceMs, until: 'reaped', reapTimeoutMs: limits.reapTimeoutMs }).then(
      (report) => report.gone,
    );
  // Read before the child can be reaped: every stop of the group is checked against it.
  const leader = pid === undefined ? undefined : groupLeader(pid, subprocess);
  const stop = (reason: StopReason | undefined): void => {
    if (leader === undefined || stopping !== undefined) return;
    stopReason = reason;
    stopping = stopTree(leader);
  };
  const onAbort = (): void => stop(cancel.reason as StopReason);
  let timer: NodeJS.Timeout | undefined;
  if (leader !== undefined) {
    onSpawn(leader.pid, leader.startTicks);
    timer = setTimeout(() => stop('timeout'), limits.timeoutMs);
    if (cancel.aborted) onAbort();
    else cancel.addEventListener('abort', onAbort, { once: true });
    // Stragglers keep the output pipes open, so the result below would wait for them forever.
    subprocess.once('exit', () => {
      if (groupAlive(leader.pid)) stop(undefined);
    });
  }

  const result = await subprocess;
  clearTimeout(timer);
  cancel.removeEventListener('abort', onAbort);
  const groupGone = leader === undefined ? true : await (stopping ?? stopTree(leader));
  const outcome: CommandOutcome = {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    stdout: stdout.evidence(),
    stderr: stderr.evidence(),
    groupGone,
  };
  if (stopReason !== undefined) outcome.stopReason = stopReason;
  if (pid === undefined || (result.failed && result.exitCode === undefined && result.signal === undefined)) {
    outcome.error = { code: 'spawn_failed', detail: result.shortMessage ?? result.message ?? 'spawn failed' };
  }
  return outcome;
}
