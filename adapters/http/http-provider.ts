import type { EffectTarget } from '../../frontier/index.js';
import type { HttpEffectAdapterConfig, HttpOperation } from './http-effect-config.js';
import { HttpEffectError } from './http-effect-error.js';

export interface Answer {
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

/** Sends one request: the answer, or why there is none (no connection: `refused`; else `lost`). */
export async function send(
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

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const defaultInputDigest = (receipt: unknown) =>
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
 * The provider `config` describes, as perform, lookup and observe read it: its operations, its
 * error codes and its reads (which change nothing).
 */
export interface HttpProvider {
  readonly config: HttpEffectAdapterConfig;
  /** The provider's error code in an answer's body (`config.errorCode`). */
  codeOf(body: unknown): string | undefined;
  /** A path of the provider as a URL (under `config.baseUrl`). */
  url(path: string): URL;
  /** The intent's operation; `http_effect_operation_unknown` if the config has none of its name. */
  operationOf(intent: EffectTarget): HttpOperation;
  /** A read that changes nothing: every failure is `http_effect_lookup_failed`. */
  read(path: string): Promise<Answer>;
  /** A status read: its JSON object at 200, undefined at 404, else `http_effect_lookup_failed`. */
  statusOf(path: string): Promise<unknown>;
}

/** The provider `config` describes (its data fields already parsed by httpEffectAdapter). */
export function httpProvider(config: HttpEffectAdapterConfig): HttpProvider {
  const codeOf = providerCodeReader(config.errorCode);
  const url = (path: string) => new URL(path, config.baseUrl);
  const read = async (path: string): Promise<Answer> => {
    const outcome = await send(url(path), { method: 'GET' }, config.timeoutMs);
    if (outcome.kind !== 'answer')
      throw new HttpEffectError('http_effect_lookup_failed', `GET ${path}: ${outcome.message}`);
    return outcome.answer;
  };
  return {
    config,
    codeOf,
    url,
    operationOf(intent) {
      const operation = Object.hasOwn(config.operations, intent.operation)
        ? config.operations[intent.operation]
        : undefined;
      if (operation === undefined)
        throw new HttpEffectError(
          'http_effect_operation_unknown',
          `no operation ${intent.operation}; nothing was sent`,
        );
      return operation;
    },
    read,
    async statusOf(path) {
      const { status, body } = await read(path);
      if (status === 200 && isObject(body)) return body;
      if (status === 404) return undefined;
      throw new HttpEffectError(
        'http_effect_lookup_failed',
        `GET ${path}: status ${status} (${JSON.stringify(body)})`,
        {
          status,
          providerCode: codeOf(body),
        },
      );
    },
  };
}
