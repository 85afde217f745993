import { CodedError } from '../../base/index.js';

/**
 * Error codes of the ACP driver. Two families:
 *
 * - refusals the driver's client side sends back to an agent as JSON-RPC errors, with the code in
 *   `error.data.code` (and recorded in the receipt's `artifactRefusals` as `<method>:<path>`);
 * - failure codes: the `code` of a `{ ok: false }` DriverResult, next to the pool-wide `kind`.
 *
 * Nothing here is thrown across the pool boundary: failures travel as data.
 */
export const ACP_REFUSAL_CODES = [
  'path_escape',
  'symlink_escape',
  'not_a_file',
  'file_missing',
  'file_too_large',
  'wrong_session',
] as const;
export type AcpRefusalCode = (typeof ACP_REFUSAL_CODES)[number];

export const ACP_FAILURE_CODES = [
  'acp_spawn_failed',
  'acp_protocol_version',
  'acp_agent_error',
  'acp_process_exited',
  'acp_connection_closed',
  'acp_timeout',
  'acp_aborted',
  'acp_driver_crashed',
] as const;
export type AcpFailureCode = (typeof ACP_FAILURE_CODES)[number];

/**
 * Codes of the scripted launch helpers (`scriptedAgentLaunch`): a recipe that does not parse or
 * cannot be made concrete (`path` names the field), a command no helper knows, an agent that
 * `npm run agents:install` has not installed.
 */
export const ACP_LAUNCH_CODES = ['invalid_launch_config', 'agent_unsupported', 'agent_not_installed'] as const;
export type AcpLaunchCode = (typeof ACP_LAUNCH_CODES)[number];

/** JSON-RPC codes used in refusals: the request's `path` was not acceptable, or the file is not there. */
export const JSONRPC_INVALID_PARAMS = -32602;
export const JSONRPC_RESOURCE_NOT_FOUND = -32002;

/** Internal carrier for a failure code between the stages of one run; never leaves the driver. */
export class AcpRunError extends CodedError<AcpFailureCode> {}
