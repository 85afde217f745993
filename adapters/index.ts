// Effect adapters for providers outside the Host: each one generic, configured per provider.
export {
  httpEffectAdapter,
  HttpCapabilities,
  HTTP_EFFECT_CODES,
  HttpEffectError,
  httpNotPerformed,
  type HttpEffectAdapter,
  type HttpEffectObservation,
  type HttpEffectAdapterConfig,
  type HttpOperation,
  type HttpCall,
  type KeyIdempotency,
  type ProviderIdIdempotency,
  type NoIdempotency,
  type HttpEffectCode,
} from './http/index.js';
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
