import { CodedError } from '../../base/index.js';

/**
 * Error codes of the Codex driver. Two families, neither of which is thrown across the pool
 * boundary:
 *
 * - failure codes: the `code` of a `{ ok: false }` DriverResult (`codex_timeout`), next to the
 *   pool-wide `kind`;
 * - JSON-RPC error codes the driver sends back to Codex for server requests it will not serve.
 *
 * `CodexLaunchError` is the one thrown class: launch-configuration builders throw it for bad
 * arguments, in the caller's thread, before any run starts.
 */
export const CODEX_FAILURE_CODES = {
  codex_spawn_failed: 'the provider process could not be started (missing binary, bad cwd)',
  codex_process_exited: 'the app-server exited before the turn completed (stderr tail in the detail)',
  codex_rpc_error: 'Codex answered one of our requests (initialize, thread/start, turn/start) with a JSON-RPC error',
  codex_malformed_flood: 'more malformed or unparseable lines than the limit arrived on stdout',
  codex_turn_failed: 'turn/completed reported status `failed`; turn.error is in the detail',
  codex_timeout: 'input.timeoutMs passed; the turn was interrupted and the process group stopped',
  codex_aborted: "the caller's AbortSignal fired; the turn was interrupted and the process group stopped",
  codex_driver_crashed: 'the driver itself threw; the process group was stopped',
} as const;
export type CodexFailureCode = keyof typeof CODEX_FAILURE_CODES;

/** Refusal code for an artifact whose read threw; shared by every driver (drivers/artifacts.ts). */
export { ARTIFACT_UNREADABLE } from '../artifacts.js';

/** JSON-RPC error codes used in our replies to server requests. */
export const JSONRPC_METHOD_NOT_FOUND = -32601;
export const JSONRPC_INTERNAL_ERROR = -32603;
/** Codex's "Server overloaded; retry later." (README: retryable). */
export const CODEX_SERVER_OVERLOADED = -32001;

export type CodexLaunchErrorCode = 'invalid_launch_config' | 'codex_unavailable';

/** Thrown by the launch builders (`codexProviderArgs`, `codexEnv`) for arguments that fail validation. */
export class CodexLaunchError extends CodedError<CodexLaunchErrorCode> {
  constructor(code: CodexLaunchErrorCode, message: string, options: { path?: string | undefined } = {}) {
    super(code, message, { path: options.path, retryable: false });
  }
}
