// World W1's comparison: the result row every variant reports, the plain client's recovery (one
// loop for both surfaces), and the baselines (plain clients, no Host) that fill rows (a)–(c): of
// the provider over HTTP, and of the web app's form in a browser.
export { W1Variant, W1Fault, W1Operation, W1Surface, W1ResultRow, resultRow, surfaceOf } from './result-row.js';
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
export {
  runBrowserBaseline,
  runBrowserBaselines,
  BROWSER_BASELINE_VARIANTS,
  BROWSER_NOT_APPLICABLE,
  W1_BROWSER_TIMEOUT_MS,
  type BrowserBaselineVariant,
  type BrowserBaselineOptions,
} from './browser-baselines.js';
