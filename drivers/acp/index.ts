export { runAcp, type AcpRunOptions } from './acp-driver.js';
export { opencodeCommand, opencodeConfig, opencodeEnv, type OpencodeEnvOptions } from './opencode.js';
export {
  ACP_AGENTS,
  agentCommand,
  defaultAgentsDir,
  type AcpAgent,
  type AgentCommand,
  type ModelApi,
} from './acp-agents.js';
export {
  AgentRecipe,
  AgentRecipes,
  loadAgentRecipes,
  scriptedAgentLaunch,
  SCRIPTED_SECRET,
  type ScriptedAgentLaunch,
  type ScriptedAgentLaunchResult,
  type ScriptedLaunchOptions,
} from './agent-recipe.js';
export { acpPermissionAsk, pickPermission, type PermissionOption, type PermissionOutcome } from './permission.js';
export { WireLedger, type WireDirection, type WireObserver } from './wire-ledger.js';
export { readWorkspaceText, writeWorkspaceText, type FsRefusal } from './workspace-fs.js';
export { buildReceipt } from './acp-receipt.js';
export { AgentProcess, type ShutdownReport } from './agent-process.js';
export type { ProcessExit } from '../provider-process.js';
export {
  ACP_FAILURE_CODES,
  ACP_LAUNCH_CODES,
  ACP_REFUSAL_CODES,
  AcpRunError,
  type AcpFailureCode,
  type AcpLaunchCode,
  type AcpRefusalCode,
} from './errors.js';
