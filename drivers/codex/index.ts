export { runCodex, type CodexApprovalPolicy, type CodexRunOptions, type CodexSandboxMode } from './codex-driver.js';
export {
  codexCommand,
  codexEnv,
  codexProviderArgs,
  type CodexCommand,
  type CodexEnvOptions,
  type CodexProviderOptions,
} from './codex-launch.js';
export { answerServerRequest, APPROVAL_METHODS, CodexAsks, isApproval } from './codex-approvals.js';
export {
  CodexConnection,
  type CodexConnectionHandlers,
  type RpcOutcome,
  type ServerRequestReply,
  type WireDirection,
} from './codex-connection.js';
export { CodexProcess, type ShutdownReport } from './codex-process.js';
export type { ProcessExit } from '../provider-process.js';
export { CodexTally, type ReceiptEnd, type TurnEnd } from './codex-tally.js';
export { turnFailureRetryable } from './turn-failure.js';
export { TOOL_ITEM_TYPES } from './codex-wire.js';
export {
  ARTIFACT_UNREADABLE,
  CODEX_FAILURE_CODES,
  CodexLaunchError,
  type CodexFailureCode,
  type CodexLaunchErrorCode,
} from './errors.js';
