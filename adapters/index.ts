export {
  browserEffectAdapter,
  BrowserEffectError,
  BROWSER_EFFECT_CODES,
  browserNotPerformed,
  BrowserReceipt,
  BrowserEffectConfig,
  CHROMIUM_ARGS,
  type BrowserEffectAdapter,
  type BrowserEffectCode,
  type BrowserObservation,
} from './browser/index.js';
