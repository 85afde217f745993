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
