// World W1's comparison: the result row every variant reports, the plain client's recovery, and
// the three baselines (plain clients of the provider, no Host) that fill rows (a)–(c).
export { W1Variant, W1Fault, W1ResultRow, resultRow } from './result-row.js';
export {
  BASELINE_VARIANTS,
  ANSWER_WAIT_MS,
  runPlainClient,
  type BaselineVariant,
  type PlainClient,
  type ClientRun,
} from './client-loop.js';
export {
  runBaseline,
  runBaselines,
  BASELINE_FAULTS,
  OPERATIONS,
  type BaselineFault,
  type BaselineOptions,
} from './baselines.js';
