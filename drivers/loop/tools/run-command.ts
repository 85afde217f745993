import { z } from 'zod';
import {
  groupAlive,
  groupLeader,
  spawnGroup,
  stopGroup,
  type GroupChild,
  type GroupStopReport,
} from '../../../os/index.js';
import { cut, refused, tool, type ToolContext, type ToolOutcome } from './outcome.js';
import { StreamCapture } from './stream-capture.js';

/** How long the stop waits for the stopped processes to be gone, after its last signal. */
const REAP_TIMEOUT_MS = 5_000;

const Input = z.strictObject({
  command: z.string().min(1).describe('The shell command line, run by /bin/sh -c in the workspace folder.'),
  timeoutMs: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Milliseconds before the command is stopped (default and maximum: the run's command limit)."),
});

/** The stdout and stderr sections in `budget` characters: a stream that needs less than half leaves the rest to the other. */
function streams(stdout: StreamCapture, stderr: StreamCapture, budget: number): string {
  const sections = [
    { title: '--- stdout ---\n', stream: stdout },
    { title: '--- stderr ---\n', stream: stderr },
  ].filter((section) => !section.stream.empty);
  let left = budget - sections.reduce((size, section) => size + section.title.length + 1, 0);
  const texts: string[] = [];
  sections.forEach((section, i) => {
    const others = sections.slice(i + 1).reduce((size, other) => size + Math.min(other.stream.chars, left / 2), 0);
    const text = section.stream.text(Math.max(0, left - others)).replace(/\n$/, '');
    left -= text.length;
    texts.push(section.title + text);
  });
  return texts.join('\n');
}

/**
 * Runs the command as the leader of its own process group (confined by `ctx.sandbox` when given),
 * stdin closed. On its timeout or `ctx.signal` the whole group is stopped: SIGTERM, then SIGKILL
 * after `ctx.graceMs`; processes it leaves running when it exits are stopped too, so nothing it
 * started outlives the call. Never rejects.
 */
async function run(input: z.output<typeof Input>, ctx: ToolContext): Promise<ToolOutcome> {
  const timeoutMs = input.timeoutMs ?? ctx.commandTimeoutMs;
  if (timeoutMs > ctx.commandTimeoutMs)
    return {
      ...refused('tool_input_invalid', `timeoutMs: at most ${ctx.commandTimeoutMs} (got ${timeoutMs})`),
      path: 'timeoutMs',
    };
  if (ctx.signal.aborted) return refused('command_aborted', 'the run was stopped before the command started');
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...ctx.env };
  let child: GroupChild;
  try {
    child = spawnGroup('/bin/sh', ['-c', input.command], { cwd: ctx.workspace, env, sandbox: ctx.sandbox });
  } catch (error) {
    // Nothing started: SandboxRefused (a sandbox that would show a hidden path) or a command it cannot run.
    return refused('command_spawn_failed', `the command could not start: ${(error as Error).message}`);
  }
  child.stdin?.end();
  const stdout = new StreamCapture(ctx.maxOutputChars);
  const stderr = new StreamCapture(ctx.maxOutputChars);
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  const pid = child.pid;
  if (pid === undefined) {
    const failed = await child;
    return refused('command_spawn_failed', `the command could not start: ${failed.shortMessage ?? failed.message}`);
  }
  // Read now, while the leader cannot have been reaped: every stop is checked against it.
  const leader = groupLeader(pid, child);
  let stopped: 'timeout' | 'aborted' | 'leftovers' | undefined;
  let stopping: Promise<GroupStopReport> | undefined;
  const stop = (why: NonNullable<typeof stopped>): void => {
    if (stopping !== undefined) return;
    stopped = why;
    stopping = stopGroup(leader, { graceMs: ctx.graceMs, until: 'stopped', reapTimeoutMs: REAP_TIMEOUT_MS });
  };
  const timer = setTimeout(() => stop('timeout'), timeoutMs);
  const onAbort = (): void => stop('aborted');
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  // A background process holding the output pipes would keep `child` from settling forever.
  child.once('exit', () => {
    if (groupAlive(pid)) stop('leftovers');
  });
  const result = await child;
  clearTimeout(timer);
  ctx.signal.removeEventListener('abort', onAbort);
  const report = await (stopping ??
    stopGroup(leader, { graceMs: ctx.graceMs, until: 'stopped', reapTimeoutMs: REAP_TIMEOUT_MS }));
  if (result.exitCode === undefined && result.signal === undefined && stopped === undefined)
    return refused('command_spawn_failed', `the command could not start: ${result.shortMessage ?? result.message}`);

  const exitCode = result.exitCode ?? null;
  const lines = [result.signal ? `killed by ${result.signal}` : `exit ${exitCode}`];
  if (stopped === 'timeout')
    lines.unshift(`timed out after ${timeoutMs} ms: the command and all it started were stopped`);
  if (stopped === 'aborted') lines.unshift('aborted: the run was stopped, and the command and all it started with it');
  if (stopped === 'leftovers') lines.push('(processes it left running in the background were stopped)');
  if (!report.gone) lines.push('(some of its processes could not be stopped)');
  const head = lines.join('\n');
  const output = cut(
    `${head}\n${streams(stdout, stderr, ctx.maxOutputChars - head.length - 1)}`.trimEnd(),
    ctx.maxOutputChars,
    'head-and-tail',
  );
  if (stopped === 'timeout') return { ok: false, code: 'command_timeout', output, exitCode };
  if (stopped === 'aborted') return { ok: false, code: 'command_aborted', output, exitCode };
  return { ok: true, output, exitCode };
}

export const runCommand = tool({
  name: 'run_command',
  description:
    'Runs a shell command line (/bin/sh -c) in the workspace folder, stdin closed, and answers `exit <code>` then its stdout and stderr (a long output keeps its head and tail). A non-zero exit is a normal answer. The command, and everything it started, is stopped at its timeout; background processes do not outlive it.',
  input: Input,
  readOnly: false,
  run,
});
