// The generic HTTP Effect adapter: a provider described by a config (its operations, their
// idempotency style, how a lookup reads, which answers prove nothing was performed).
export { httpEffectAdapter, type HttpEffectAdapter, type HttpEffectObservation } from './http-effect-adapter.js';
export {
  HttpCapabilities,
  type HttpEffectAdapterConfig,
  type HttpOperation,
  type HttpCall,
  type KeyIdempotency,
  type ProviderIdIdempotency,
  type NoIdempotency,
} from './http-effect-config.js';
export { HTTP_EFFECT_CODES, HttpEffectError, httpNotPerformed, type HttpEffectCode } from './http-effect-error.js';
