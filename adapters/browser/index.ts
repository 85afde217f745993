// The generic browser Effect adapter: a site's form driven in Chromium (playwright-core, loaded on
// first use), its confirmation read into a receipt with the page kept as content-addressed evidence.
export { browserEffectAdapter } from './browser-adapter.js';
export { BrowserReceipt, EvidenceFile, type BrowserEffectAdapter, type BrowserObservation } from './browser-receipt.js';
export { BrowserEffectConfig, CHROMIUM_ARGS, parseBrowserConfig, type ParsedBrowserConfig } from './browser-config.js';
export {
  BROWSER_EFFECT_CODES,
  BrowserEffectError,
  browserNotPerformed,
  type BrowserEffectCode,
} from './browser-error.js';
