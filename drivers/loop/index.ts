export { runLoopDriver, LOOP_PROVIDER, LOOP_VERSION, LOOP_SYSTEM } from './loop-driver.js';
export { LOOP_FAILURE_CODES, type LoopFailureCode } from './errors.js';
export { LoopSettings, LoopRunConfig, type LoopSettingsIn } from './loop-config.js';
export { WireFormat, type ModelTurn, type ToolCall, type ToolSpec } from './conversation.js';
export { wireFor } from './wire/index.js';
