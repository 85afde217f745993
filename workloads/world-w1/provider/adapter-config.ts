import {
  httpEffectAdapter,
  type HttpCall,
  type HttpEffectAdapter,
  type HttpEffectAdapterConfig,
} from '../../../adapters/index.js';
import type { ProviderCode } from './provider-error.js';
import { Discovery, Operation, Receipt } from './provider-schema.js';

/** What the world's adapter needs to know besides the provider's URL. */
export interface ProviderAdapterOptions {
  /** `http://127.0.0.1:PORT` of a running provider (`ProviderProcess.url`). */
  url: string;
  /** The adapter's own file of requestId → transfer id (kept across Host restarts). */
  idFile: string;
  /** Per call, connect to last byte (default 5000 ms). */
  timeoutMs?: number;
}

/**
 * An operation's body: the input's `reference` (the effect's own name, which the records count
 * by; the request id when the input has none), the intent's target, the input as `data`.
 */
const body = ({ requestId, input, intent }: HttpCall) => ({
  reference: typeof input['reference'] === 'string' ? input['reference'] : requestId,
  target: intent.target,
  data: input,
});

/** An input's `ifMatch` (a target version it was decided against) becomes the `If-Match` header. */
const headers = ({ input }: HttpCall): Record<string, string> =>
  typeof input['ifMatch'] === 'string' ? { 'If-Match': input['ifMatch'] } : {};

/** The provider's refusals of a perform: each is answered before anything is committed. */
const REFUSALS: ReadonlySet<string> = new Set([
  'provider_invalid_request',
  'provider_route_not_found',
  'provider_body_too_large',
  'provider_target_not_found',
  'provider_target_changed',
  'provider_idempotency_key_reused',
  'provider_storage_failed',
] satisfies ProviderCode[]);

/** World W1's provider as the generic HTTP adapter's config (docs/world-w1.md, "The world's adapter"). */
export function providerAdapterConfig(options: ProviderAdapterOptions): HttpEffectAdapterConfig {
  return {
    baseUrl: options.url,
    timeoutMs: options.timeoutMs ?? 5000,
    identityHeader: 'Provider-Identity',
    discovery: {
      path: '/.well-known/provider',
      capabilities: (answer, operation) => {
        const parsed = Discovery.safeParse(answer);
        const name = Operation.safeParse(operation);
        return parsed.success && name.success ? parsed.data.capabilities[name.data] : undefined;
      },
    },
    targetPath: (target) => `/v1/targets/${encodeURIComponent(target)}`,
    operations: {
      orders: {
        path: '/v1/orders',
        body,
        headers,
        idempotency: {
          style: 'key',
          header: 'Idempotency-Key',
          lookupPath: (requestId) => `/v1/idempotency/${encodeURIComponent(requestId)}`,
          expiredStatuses: [410],
        },
      },
      transfers: {
        path: '/v1/transfers',
        body,
        headers,
        idempotency: {
          style: 'provider-id',
          idOf: (answer) => {
            const receipt = Receipt.safeParse(answer);
            return receipt.success ? receipt.data.id : undefined;
          },
          statusPath: (id) => `/v1/transfers/${encodeURIComponent(id)}`,
          settled: (receipt) => Receipt.safeParse(receipt).data?.status === 'succeeded',
          idFile: options.idFile,
        },
      },
      messages: { path: '/v1/messages', body, headers, idempotency: { style: 'none' } },
    },
    // A refusal names one of the provider's codes; `provider_internal_error` or a 5xx from something in between does not.
    refusal: (status, answer) => {
      const code = (answer as { code?: unknown } | undefined)?.code;
      return status >= 400 && typeof code === 'string' && REFUSALS.has(code);
    },
  };
}

/** The world's adapter: the generic HTTP adapter configured for this provider. */
export function providerEffectAdapter(options: ProviderAdapterOptions): HttpEffectAdapter {
  return httpEffectAdapter(providerAdapterConfig(options));
}
