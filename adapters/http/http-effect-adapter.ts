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
} from './http-effect-config.js';
import { HttpEffectError, httpNotPerformed } from './http-effect-error.js';
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

interface Answer {
  status: number;
  headers: Headers;
  /** The body as JSON, `undefined` when it is not JSON. */
  body: unknown;
}

type Outcome =
  { kind: 'answer'; answer: Answer } | { kind: 'refused'; message: string } | { kind: 'lost'; message: string };

/** Whether fetch's error says no connection was made (so nothing was sent). */
function connectionRefused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown; errors?: Array<{ code?: unknown }> } }).cause;
  if (cause === undefined) return false;
  if (cause.code === 'ECONNREFUSED') return true;
  return Array.isArray(cause.errors) && cause.errors.length > 0 && cause.errors.every((e) => e.code === 'ECONNREFUSED');
}

async function send(
  url: URL,
  init: { method: string; headers?: Record<string, string>; body?: string },
  timeoutMs: number,
): Promise<Outcome> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { kind: 'answer', answer: { status: res.status, headers: res.headers, body } };
  } catch (error) {
    if (connectionRefused(error)) return { kind: 'refused', message: String((error as Error).cause) };
    const cause = (error as Error).cause;
    return { kind: 'lost', message: `${(error as Error).message}${cause === undefined ? '' : `: ${String(cause)}`}` };
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const defaultInputDigest = (receipt: unknown) =>
  isObject(receipt) && typeof receipt['inputDigest'] === 'string' ? receipt['inputDigest'] : undefined;

/** How the provider's error code is read from an answer's body (`HttpEffectAdapterConfig.errorCode`). */
function providerCodeReader(
  where: HttpEffectAdapterConfig['errorCode'] = 'code',
): (body: unknown) => string | undefined {
  const asCode = (value: unknown) =>
    typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
  if (typeof where === 'function') return (body) => asCode(where(body));
  const path = where.split('.');
  return (body) => {
    let at: unknown = body;
    for (const key of path) {
      if (!isObject(at) || !Object.hasOwn(at, key)) return undefined;
      at = at[key];
    }
    return asCode(at);
  };
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
  const codeOf = providerCodeReader(config.errorCode);
  const digestHeader = config.inputDigestHeader ?? 'Input-Digest';
  const pollMs = config.pollMs ?? 25;
  const settleTimeoutMs = config.settleTimeoutMs ?? config.timeoutMs;
  const at = (path: string) => new URL(path, config.baseUrl);

  const operationOf = (intent: EffectTarget): HttpOperation => {
    const operation = Object.hasOwn(config.operations, intent.operation)
      ? config.operations[intent.operation]
      : undefined;
    if (operation === undefined)
      throw new HttpEffectError('http_effect_operation_unknown', `no operation ${intent.operation}; nothing was sent`);
    return operation;
  };

  /** A read that changes nothing: every failure is `http_effect_lookup_failed`. */
  const read = async (path: string): Promise<Answer> => {
    const outcome = await send(at(path), { method: 'GET' }, config.timeoutMs);
    if (outcome.kind !== 'answer')
      throw new HttpEffectError('http_effect_lookup_failed', `GET ${path}: ${outcome.message}`);
    return outcome.answer;
  };

  const statusOf = async (path: string): Promise<unknown> => {
    const { status, body } = await read(path);
    if (status === 200 && isObject(body)) return body;
    if (status === 404) return undefined;
    throw new HttpEffectError('http_effect_lookup_failed', `GET ${path}: status ${status} (${JSON.stringify(body)})`, {
      status,
      providerCode: codeOf(body),
    });
  };

  return {
    endpoint: config.endpoint ?? config.baseUrl,

    async perform(requestId, input, intent) {
      const operation = operationOf(intent);
      let text: string;
      let headers: Record<string, string>;
      try {
        const inputDigest = digestOf(input);
        const call: HttpCall = { requestId, input, intent, inputDigest };
        text = JSON.stringify(operation.body(call));
        if (text === undefined) throw new Error('the body builder returned nothing JSON can hold');
        headers = {
          ...(operation.headers?.(call) ?? {}),
          'content-type': 'application/json',
          [digestHeader]: inputDigest,
          ...(operation.idempotency.style === 'key' ? { [operation.idempotency.header]: requestId } : {}),
        };
      } catch (error) {
        throw new HttpEffectError(
          'http_effect_invalid_input',
          `${intent.operation} ${requestId}: ${String(error)}; nothing was sent`,
          {
            cause: error,
          },
        );
      }
      const lost = (why: string, status?: number, body?: unknown) =>
        new HttpEffectError(
          'http_effect_no_answer',
          `${intent.operation} ${requestId}: ${why}; it may have been performed`,
          { status, providerCode: codeOf(body) },
        );
      const outcome = await send(
        at(operation.path),
        { method: operation.method ?? 'POST', headers, body: text },
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
      const id = idempotency.idOf(body);
      if (id === undefined) throw lost(`status ${status} without a provider id`, status, body);
      recordProviderId(idempotency.idFile, { requestId, operation: intent.operation, id });
      if (idempotency.settled(body)) return body;
      const deadline = Date.now() + settleTimeoutMs;
      for (;;) {
        await delay(pollMs);
        let receipt: unknown;
        try {
          receipt = await statusOf(idempotency.statusPath(id));
        } catch (error) {
          throw lost(`polling ${id}: ${String(error)}`);
        }
        if (receipt !== undefined && idempotency.settled(receipt)) return receipt;
        if (Date.now() > deadline) throw lost(`${id} did not settle within ${settleTimeoutMs} ms`);
      }
    },

    async lookup(requestId, intent) {
      const { idempotency } = operationOf(intent);
      switch (idempotency.style) {
        case 'none':
          return null;
        case 'key': {
          const path = idempotency.lookupPath(requestId);
          const { status, body } = await read(path);
          if (status === 200 && isObject(body)) return [body];
          if (status === 404) return [];
          if ((idempotency.expiredStatuses ?? [410]).includes(status)) return null;
          throw new HttpEffectError(
            'http_effect_lookup_failed',
            `GET ${path}: status ${status} (${JSON.stringify(body)})`,
            {
              status,
              providerCode: codeOf(body),
            },
          );
        }
        case 'provider-id': {
          const ids = providerIdsOf(idempotency.idFile, requestId, intent.operation);
          if (ids.length === 0) return null;
          const receipts: unknown[] = [];
          for (const id of ids) {
            const receipt = await statusOf(idempotency.statusPath(id));
            if (receipt !== undefined) receipts.push(receipt);
          }
          return receipts;
        }
      }
    },

    notPerformed: httpNotPerformed,

    async observe(intent) {
      const operation = operationOf(intent);
      const discovery = await read(config.discovery.path);
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
      const target = await read(path);
      if (target.status === 404) return { endpointIdentity, targetVersion: null, capabilities: capabilities.data };
      const etag = target.headers.get('etag');
      if (target.status !== 200 || etag === null)
        throw new HttpEffectError(
          'http_effect_lookup_failed',
          `GET ${path}: status ${target.status}, ETag ${etag ?? 'absent'}`,
        );
      return { endpointIdentity, targetVersion: etag, capabilities: capabilities.data };
    },

    receiptInputDigest: (receipt) => (config.receiptInputDigest ?? defaultInputDigest)(receipt),
  };
}
