/**
 * Failure codes of the command driver: the `code` of a `{ ok: false }` DriverResult, next to the
 * pool-wide `kind`. Nothing is thrown across the pool boundary: failures travel as data.
 */
export const COMMAND_FAILURE_CODES = {
  command_spawn_failed: 'the command could not be started (missing binary, bad cwd); the errno is in the detail',
  command_timeout: 'the command did not exit within input.timeoutMs; its process group was stopped',
  command_aborted: "the caller's AbortSignal fired; the process group was stopped (or never started)",
} as const;
export type CommandFailureCode = keyof typeof COMMAND_FAILURE_CODES;
