import { setTimeout as delay } from 'node:timers/promises';
import { zodIssue } from '../../base/index.js';
import type { EffectTarget } from '../../frontier/index.js';
import { digestOf } from '../../store/index.js';
import {
  HttpCapabilities,
  HttpEffectConfigData,
  type HttpCall,
  type HttpEffectAdapterConfig,
  type HttpOperation,
  type ProviderIdIdempotency,
} from './http-effect-config.js';
import { HttpEffectError, httpNotPerformed } from './http-effect-error.js';
import { defaultInputDigest, httpProvider, isObject, send, type HttpProvider } from './http-provider.js';
import { providerIdsOf, recordProviderId } from './provider-id-file.js';

/** What `observe` reads: the endpoint's identity, the target's version, the operation's capabilities. */
export interface HttpEffectObservation {
  endpointIdentity: string;
  targetVersion: string | null;
  capabilities: HttpCapabilities;
}

/**
 * An Effect adapter over an HTTP provider (the Host's `EffectAdapter` with lookup, observe and
 * receiptInputDigest, docs/effects.md).
 */
export interface HttpEffectAdapter {
  readonly endpoint: string;
  /**
   * Sends the operation once under `requestId` and resolves with the provider's receipt (JSON).
   * Rejects with an `HttpEffectError`: `http_effect_no_answer` when the request may have reached
   * the provider and no usable answer came back (look it up; `notPerformed` is false); a code
   * `notPerformed` holds for when the provider proves nothing was done (a refusal, no connection,
   * nothing sent).
   */
  perform(requestId: string, input: Record<string, unknown>, intent: EffectTarget): Promise<unknown>;
  /**
   * Every receipt the provider holds under `requestId`, or `null` when it cannot say: the
   * operation has no lookup, the key's window passed, or no provider id was recorded. Changes
   * nothing; a failure is `http_effect_lookup_failed` (retryable).
   */
  lookup(requestId: string, intent: EffectTarget): Promise<unknown[] | null>;
  notPerformed(error: unknown): boolean;
  /** Reads the endpoint and the target now; changes nothing. Fails `http_effect_lookup_failed`. */
  observe(intent: EffectTarget): Promise<HttpEffectObservation>;
  receiptInputDigest(receipt: unknown): string | undefined;
}

/**
 * The adapter for the provider `config` describes. It knows no provider of its own: how each
 * operation is sent, which idempotency it has, how it is looked up and which answers prove nothing
 * was performed are the config's. Throws `http_effect_config_invalid` if the config's data fields
 * do not parse.
 */
export function httpEffectAdapter(config: HttpEffectAdapterConfig): HttpEffectAdapter {
  const data = HttpEffectConfigData.safeParse(config);
  if (!data.success) {
    const issue = zodIssue('http_effect_config_invalid', data.error);
    throw new HttpEffectError(issue.code, issue.message, { path: issue.path });
  }
  const provider = httpProvider(config);
  return {
    endpoint: config.endpoint ?? config.baseUrl,
    perform: (requestId, input, intent) => performOnce(provider, requestId, input, intent),
    lookup: (requestId, intent) => lookUp(provider, requestId, intent),
    notPerformed: httpNotPerformed,
    observe: (intent) => observeOn(provider, intent),
    receiptInputDigest: (receipt) => (config.receiptInputDigest ?? defaultInputDigest)(receipt),
  };
}

/** `http_effect_no_answer` for one perform: the request may have reached the provider. */
type Lost = (why: string, status?: number, body?: unknown) => HttpEffectError;

/** `perform`: the request built, sent once, its answer judged and (a provider id's) its status polled until settled. */
async function performOnce(
  provider: HttpProvider,
  requestId: string,
  input: Record<string, unknown>,
  intent: EffectTarget,
): Promise<unknown> {
  const { config, codeOf } = provider;
  const operation = provider.operationOf(intent);
  const request = requestOf(config, operation, requestId, input, intent);
  const lost: Lost = (why, status, body) =>
    new HttpEffectError(
      'http_effect_no_answer',
      `${intent.operation} ${requestId}: ${why}; it may have been performed`,
      {
        status,
        providerCode: codeOf(body),
      },
    );
  const outcome = await send(
    provider.url(operation.path),
    { method: operation.method ?? 'POST', ...request },
    config.timeoutMs,
  );
  if (outcome.kind === 'refused')
    throw new HttpEffectError('http_effect_unreachable', `${config.baseUrl}: ${outcome.message}; nothing was sent`);
  if (outcome.kind === 'lost') throw lost(outcome.message);
  const { status, body } = outcome.answer;
  if (status < 200 || status > 299) {
    if (config.refusal(status, body))
      throw new HttpEffectError(
        'http_effect_refused',
        `${status} ${codeOf(body) ?? ''}: ${intent.operation} ${requestId} was refused; nothing was performed`,
        { status, providerCode: codeOf(body) },
      );
    throw lost(`status ${status} is no refusal that proves nothing was performed`, status, body);
  }
  if (!isObject(body)) throw lost(`status ${status} with a body that is not a JSON object`, status);
  const idempotency = operation.idempotency;
  if (idempotency.style !== 'provider-id') return body;
  return settle(provider, idempotency, { requestId, intent, status, body }, lost);
}

/** The operation's body and headers for the call; a builder that throws is `http_effect_invalid_input` (nothing sent). */
function requestOf(
  config: HttpEffectAdapterConfig,
  operation: HttpOperation,
  requestId: string,
  input: Record<string, unknown>,
  intent: EffectTarget,
): { headers: Record<string, string>; body: string } {
  try {
    const inputDigest = digestOf(input);
    const call: HttpCall = { requestId, input, intent, inputDigest };
    const text = JSON.stringify(operation.body(call));
    if (text === undefined) throw new Error('the body builder returned nothing JSON can hold');
    const headers = {
      ...(operation.headers?.(call) ?? {}),
      'content-type': 'application/json',
      [config.inputDigestHeader ?? 'Input-Digest']: inputDigest,
      ...(operation.idempotency.style === 'key' ? { [operation.idempotency.header]: requestId } : {}),
    };
    return { headers, body: text };
  } catch (error) {
    throw new HttpEffectError(
      'http_effect_invalid_input',
      `${intent.operation} ${requestId}: ${String(error)}; nothing was sent`,
      {
        cause: error,
      },
    );
  }
}

/**
 * A provider-id answer: its id recorded (so a lookup after a restart finds it), then its status
 * polled every `pollMs` until settled, for at most `settleTimeoutMs`.
 */
async function settle(
  provider: HttpProvider,
  idempotency: ProviderIdIdempotency,
  answer: { requestId: string; intent: EffectTarget; status: number; body: unknown },
  lost: Lost,
): Promise<unknown> {
  const { config } = provider;
  const { requestId, intent, status, body } = answer;
  const id = idempotency.idOf(body);
  if (id === undefined) throw lost(`status ${status} without a provider id`, status, body);
  recordProviderId(idempotency.idFile, { requestId, operation: intent.operation, id });
  if (idempotency.settled(body)) return body;
  const pollMs = config.pollMs ?? 25;
  const settleTimeoutMs = config.settleTimeoutMs ?? config.timeoutMs;
  const deadline = Date.now() + settleTimeoutMs;
  for (;;) {
    await delay(pollMs);
    let receipt: unknown;
    try {
      receipt = await provider.statusOf(idempotency.statusPath(id));
    } catch (error) {
      throw lost(`polling ${id}: ${String(error)}`);
    }
    if (receipt !== undefined && idempotency.settled(receipt)) return receipt;
    if (Date.now() > deadline) throw lost(`${id} did not settle within ${settleTimeoutMs} ms`);
  }
}

/** `lookup`, by the operation's idempotency style: by key, by the provider ids recorded, or none. */
async function lookUp(provider: HttpProvider, requestId: string, intent: EffectTarget): Promise<unknown[] | null> {
  const { idempotency } = provider.operationOf(intent);
  switch (idempotency.style) {
    case 'none':
      return null;
    case 'key': {
      const path = idempotency.lookupPath(requestId);
      const { status, body } = await provider.read(path);
      if (status === 200 && isObject(body)) return [body];
      if (status === 404) return [];
      if ((idempotency.expiredStatuses ?? [410]).includes(status)) return null;
      throw new HttpEffectError(
        'http_effect_lookup_failed',
        `GET ${path}: status ${status} (${JSON.stringify(body)})`,
        {
          status,
          providerCode: provider.codeOf(body),
        },
      );
    }
    case 'provider-id': {
      const ids = providerIdsOf(idempotency.idFile, requestId, intent.operation);
      if (ids.length === 0) return null;
      const receipts: unknown[] = [];
      for (const id of ids) {
        const receipt = await provider.statusOf(idempotency.statusPath(id));
        if (receipt !== undefined) receipts.push(receipt);
      }
      return receipts;
    }
  }
}

/**
 * `observe`: the endpoint's identity and the operation's capabilities from the discovery path
 * (which must declare the config's idempotency style), and the target's version (its ETag; null at 404).
 */
async function observeOn(provider: HttpProvider, intent: EffectTarget): Promise<HttpEffectObservation> {
  const { config } = provider;
  const operation = provider.operationOf(intent);
  const discovery = await provider.read(config.discovery.path);
  const endpointIdentity = discovery.headers.get(config.identityHeader);
  if (discovery.status !== 200 || endpointIdentity === null)
    throw new HttpEffectError(
      'http_effect_lookup_failed',
      `GET ${config.discovery.path}: status ${discovery.status}, ${config.identityHeader} ${endpointIdentity ?? 'absent'}`,
    );
  const capabilities = HttpCapabilities.safeParse(config.discovery.capabilities(discovery.body, intent.operation));
  if (!capabilities.success)
    throw new HttpEffectError(
      'http_effect_lookup_failed',
      `GET ${config.discovery.path}: no capabilities of ${intent.operation} (${capabilities.error.message})`,
    );
  if (capabilities.data.idempotency !== operation.idempotency.style)
    throw new HttpEffectError(
      'http_effect_lookup_failed',
      `${intent.operation}: the provider declares idempotency ${capabilities.data.idempotency}, the config ${operation.idempotency.style}`,
    );
  const path = config.targetPath(intent.target);
  const target = await provider.read(path);
  if (target.status === 404) return { endpointIdentity, targetVersion: null, capabilities: capabilities.data };
  const etag = target.headers.get('etag');
  if (target.status !== 200 || etag === null)
    throw new HttpEffectError(
      'http_effect_lookup_failed',
      `GET ${path}: status ${target.status}, ETag ${etag ?? 'absent'}`,
    );
  return { endpointIdentity, targetVersion: etag, capabilities: capabilities.data };
}
