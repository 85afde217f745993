export { runAcp, type AcpRunOptions } from './acp-driver.js';
export { opencodeCommand, opencodeConfig, opencodeEnv, type OpencodeEnvOptions } from './opencode.js';
export { pickPermission, type PermissionOption, type PermissionOutcome } from './permission.js';
export { WireLedger, type WireDirection, type WireObserver } from './wire-ledger.js';
export { readWorkspaceText, writeWorkspaceText, type FsRefusal } from './workspace-fs.js';
export { buildReceipt } from './acp-receipt.js';
export { AgentProcess, type ProcessExit, type ShutdownReport } from './agent-process.js';
export {
  ACP_FAILURE_CODES,
  ACP_REFUSAL_CODES,
  AcpRunError,
  type AcpFailureCode,
  type AcpRefusalCode,
} from './errors.js';
