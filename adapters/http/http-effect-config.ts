import { z } from 'zod';
import type { EffectTarget } from '../../frontier/index.js';

/** What a request builder is given: the Effect's request id, its input and what it acts on. */
export interface HttpCall {
  readonly requestId: string;
  readonly input: Record<string, unknown>;
  readonly intent: EffectTarget;
  /** `digestOf(input)` (store/canonical.ts): sent with every perform so the provider can store it. */
  readonly inputDigest: string;
}

/** The provider honours a key header: the request id is sent as the key, and a lookup reads by it. */
export interface KeyIdempotency {
  readonly style: 'key';
  /** The header the key goes in (`Idempotency-Key`). */
  readonly header: string;
  /** The path that answers the receipt stored under a key: 200 receipt, 404 none. */
  readonly lookupPath: (requestId: string) => string;
  /** Statuses meaning "the window passed, the provider no longer says": lookup resolves `null` (default `[410]`). */
  readonly expiredStatuses?: readonly number[];
}

/**
 * The provider assigns an id in its answer (202 with an id) and answers the status under it; it
 * takes no key. The adapter records requestId → id in `idFile` (synced) before it polls, so a
 * lookup after a restart can read it; a perform whose answer was lost has no id there, and its
 * lookup resolves `null`.
 */
export interface ProviderIdIdempotency {
  readonly style: 'provider-id';
  /** The provider's id in a 2xx answer, or `undefined` when there is none. */
  readonly idOf: (answer: unknown) => string | undefined;
  readonly statusPath: (id: string) => string;
  /** Whether a status answer is final (perform resolves with it); until then perform polls. */
  readonly settled: (receipt: unknown) => boolean;
  /** The adapter's own file of ids (JSON lines), one per adapter. */
  readonly idFile: string;
}

/** No key, no lookup: a lost answer cannot be reconciled through this provider (lookup resolves `null`). */
export interface NoIdempotency {
  readonly style: 'none';
}

/** One operation of the provider, named by the intent's `operation`. */
export interface HttpOperation {
  /** Default `POST`. */
  readonly method?: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  /** The JSON body; a throw is `http_effect_invalid_input` (nothing sent). */
  readonly body: (call: HttpCall) => unknown;
  /** Extra headers (an `If-Match` from the input, say); a throw is `http_effect_invalid_input`. */
  readonly headers?: (call: HttpCall) => Record<string, string>;
  readonly idempotency: KeyIdempotency | ProviderIdIdempotency | NoIdempotency;
}

/** One operation's declared capabilities, as an Effect observation carries them. */
export const HttpCapabilities = z.strictObject({
  idempotency: z.enum(['key', 'provider-id', 'none']),
  lookup: z.boolean(),
  lookupWindowMs: z.number().int().positive().nullable(),
});
export type HttpCapabilities = z.infer<typeof HttpCapabilities>;

/** The configuration of `httpEffectAdapter`: everything it knows of the provider. */
export interface HttpEffectAdapterConfig {
  /** `http://host:port`: every path is resolved against it. */
  readonly baseUrl: string;
  /** The binding identity recorded in each intent (default `baseUrl`). */
  readonly endpoint?: string;
  /** How long a call may take, connect to last byte; past it, a perform is `http_effect_no_answer`. */
  readonly timeoutMs: number;
  /** How long a provider-id perform polls for a settled status before it is `http_effect_no_answer` (default `timeoutMs`). */
  readonly settleTimeoutMs?: number;
  /** Pause between status polls (default 25 ms). */
  readonly pollMs?: number;
  /** The header the input digest is sent in (default `Input-Digest`). */
  readonly inputDigestHeader?: string;
  /** The answer header that states the provider's identity (`Provider-Identity`). */
  readonly identityHeader: string;
  /** Where the provider declares itself, and how to read one operation's capabilities from that answer. */
  readonly discovery: {
    readonly path: string;
    readonly capabilities: (answer: unknown, operation: string) => unknown;
  };
  /** Where a target is read: 200 with an `ETag`, 404 when it does not exist. */
  readonly targetPath: (target: string) => string;
  readonly operations: Readonly<Record<string, HttpOperation>>;
  /** Whether a non-2xx answer proves nothing was performed; any other is `http_effect_no_answer`. */
  readonly refusal: (status: number, body: unknown) => boolean;
  /** The input digest a receipt names (default: its string `inputDigest` field). */
  readonly receiptInputDigest?: (receipt: unknown) => string | undefined;
  /**
   * Where a non-2xx answer's JSON body names the provider's error code (`HttpEffectError`'s
   * `providerCode`): a dotted path (`error.code` for `{"error": {"code": "card_declined"}}`) or a
   * function of the body. Default `code`, a top-level field. A string there is the code, a number
   * its decimal text; anything else, or nothing at the path, is no code.
   */
  readonly errorCode?: string | ((body: unknown) => string | undefined);
}

/** The config's data fields, parsed when the adapter is made (the functions are typed, not parsed). */
export const HttpEffectConfigData = z.object({
  baseUrl: z.url({ protocol: /^https?$/ }),
  endpoint: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive(),
  settleTimeoutMs: z.number().int().positive().optional(),
  pollMs: z.number().int().positive().optional(),
  inputDigestHeader: z.string().min(1).optional(),
  identityHeader: z.string().min(1),
  operations: z.record(z.string(), z.object({ path: z.string().startsWith('/') })),
  errorCode: z
    .union([
      z.string().regex(/^[^.]+(?:\.[^.]+)*$/, 'must be a dotted path of field names, such as error.code'),
      z.custom<(body: unknown) => unknown>((value) => typeof value === 'function', 'expected a function'),
    ])
    .optional(),
});
