import { execa } from 'execa';

/** One git command's end: its exit code (undefined: it did not run or was killed), output and whether it timed out. */
export interface GitOutcome {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  message: string;
}

/**
 * git's environment: no system or global config, no prompt, a C locale (its messages are read),
 * and `HOME` the call's scratch directory, so no user's configuration, hooks or credentials
 * helper is ever read; `extra` adds what the embedder configured.
 */
export function cleanGitEnv(home: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
    ...extra,
  };
}

/** Runs git with `args` (never a shell) in a clean environment, for at most `timeoutMs`. */
export async function runGit(
  args: readonly string[],
  options: { env: Record<string, string>; timeoutMs: number; cwd?: string; input?: string },
): Promise<GitOutcome> {
  const r = await execa('git', args, {
    reject: false,
    extendEnv: false,
    env: options.env,
    timeout: options.timeoutMs,
    stripFinalNewline: false,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' }),
  });
  return {
    exitCode: r.exitCode,
    stdout: String(r.stdout ?? ''),
    stderr: String(r.stderr ?? ''),
    timedOut: r.timedOut,
    message: r.message ?? '',
  };
}
