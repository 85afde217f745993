// The Host's frontier work: compile a Task's Context, dispatch and observe its runs, verify,
// admit decisions, perform External Effects. host/ attaches it to a Supervisor (`openHost`).
export { createFrontierWork, clientRequestId, type HarnessFactory } from './frontier-work.js';
export { loopLogPath } from './work-options.js';
export { retryAsked, retryRequestId } from './stage-retry.js';
export { budgetAsked, budgetRequestId } from './stage-budget.js';
export {
  HarnessConfig,
  HostConfig,
  ApprovalPolicy,
  DEFAULT_APPROVALS,
  parseHostConfig,
  hostOptionsOf,
  assertReachOutsideState,
  checkHostHarnesses,
  runLimitsOf,
} from './harness-config.js';
export type { EffectAdapter, EffectEvidenceFile, EffectObservation, EffectTarget } from './effect-adapter.js';
export { ReceiptWithEvidence, withEvidence } from './effect-adapter.js';
