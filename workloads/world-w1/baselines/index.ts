// World W1's comparison: the result row every variant reports, and the three baselines (plain
// clients of the provider, no Host) that fill rows (a)–(c).
export { W1Variant, W1Fault, W1ResultRow, resultRow } from './result-row.js';
export {
  runBaseline,
  runBaselines,
  BASELINE_VARIANTS,
  BASELINE_FAULTS,
  OPERATIONS,
  type BaselineVariant,
  type BaselineFault,
  type BaselineOptions,
} from './baselines.js';
