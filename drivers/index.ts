export {
  DriverKind,
  DriverRunInput,
  type DriverRunInputIn,
  ArtifactFound,
  HarnessRunReceipt,
  DriverFailureKind,
  DriverResult,
} from './receipt.js';
export { createDriverPool, type DriverPool, type DriverRunOptions } from './pool.js';
export { collectArtifacts, ARTIFACT_UNREADABLE } from './artifacts.js';
export {
  ProviderSpawn,
  PROVIDER_SPAWN_CHANNEL,
  publishProviderSpawn,
  subscribeProviderSpawns,
  processStartTicks,
} from './provider-spawn.js';
export { DriverPoolOptions, POOL_DEFAULTS, type DriverPoolEvent, type DriverPoolStats } from './pool-options.js';
export {
  RestartIntensity,
  type RestartIntensityOptions,
  type IntensityGate,
  type KindSupervision,
} from './restart-intensity.js';
export { systemClock, type Clock } from './clock.js';
export { DriverError, DRIVER_ERROR_CODES, DRIVER_FAILURE_CODES, type DriverErrorCode } from './errors.js';
export { driverFailure, invalidInputFailure, formatZodIssues, type DriverFailure } from './failures.js';
export { createWorkerHandler, defaultDriverLoaders, type DriverFn, type DriverLoaders } from './worker.js';
export { spawnGroup, signalGroup, groupAlive } from './process-group.js';
export {
  stopGroup,
  killLeftovers,
  waitUntilStopped,
  livingGroupMembers,
  groupRunning,
  processRunning,
  type GroupStop,
} from './stop-group.js';
export {
  runCommand,
  OutputTail,
  STDOUT_TAIL_BYTES,
  STDERR_TAIL_BYTES,
  FINAL_TEXT_MAX_CHARS,
  PROVIDER_NAME_ENV,
} from './command/index.js';
export { runCodex } from './codex/index.js';
export { runAcp } from './acp/index.js';
