export {
  DriverKind,
  EnvName,
  DriverRunInput,
  type DriverRunInputIn,
  ArtifactFound,
  HarnessRunReceipt,
  DriverFailureKind,
  DriverResult,
} from './receipt.js';
export {
  decidePermission,
  PermissionAnswer,
  PermissionEvidence,
  PermissionGrant,
  PermissionKind,
  PermissionReason,
  RunPolicy,
  type PermissionVerdict,
} from './permission-policy.js';
export {
  evidenceOf,
  permissionKey,
  PermissionLog,
  PermissionRecord,
  routePermission,
  type PermissionAsk,
} from './permission-route.js';
export { envValueMissing, resolveEnvFrom } from './env-from.js';
export { createDriverPool, type DriverPool, type DriverRunOptions } from './pool.js';
export { collectArtifacts, ARTIFACT_UNREADABLE } from './artifacts.js';
export {
  ProviderSpawn,
  PROVIDER_SPAWN_CHANNEL,
  publishProviderSpawn,
  subscribeProviderSpawns,
} from './provider-spawn.js';
export { DriverPoolOptions, POOL_DEFAULTS, type DriverPoolEvent, type DriverPoolStats } from './pool-options.js';
export {
  RestartIntensity,
  type RestartIntensityOptions,
  type IntensityGate,
  type KindSupervision,
} from './restart-intensity.js';
export { systemClock, type Clock } from './clock.js';
export {
  DriverError,
  DRIVER_ERROR_CODES,
  DRIVER_FAILURE_CODES,
  POOL_FAILURE_CODES,
  RUN_LIMIT_CODES,
  type DriverErrorCode,
  type DriverFailureCode,
  type PoolFailureCode,
  type RunLimitCode,
} from './errors.js';
export {
  RUN_GUARD_MARGIN_MS,
  driverBoundMs,
  watchdogBoundMs,
  harnessJobTimeoutMs,
  startRunLimits,
  type RunBounds,
  type RunLimit,
  type RunLimits,
} from './run-deadline.js';
export { driverFailure, invalidInputFailure, type DriverFailure } from './failures.js';
export { createWorkerHandler, defaultDriverLoaders, type DriverFn, type DriverLoaders } from './worker.js';
export {
  runCommand,
  OutputTail,
  STDOUT_TAIL_BYTES,
  STDERR_TAIL_BYTES,
  FINAL_TEXT_MAX_CHARS,
  PROVIDER_NAME_ENV,
  COMMAND_FAILURE_CODES,
  type CommandFailureCode,
} from './command/index.js';
export { runCodex } from './codex/index.js';
export { runAcp } from './acp/index.js';
export {
  runLoopDriver,
  LOOP_PROVIDER,
  LOOP_FAILURE_CODES,
  LoopSettings,
  LoopRunConfig,
  WireFormat,
  type LoopFailureCode,
  type LoopSettingsIn,
} from './loop/index.js';
