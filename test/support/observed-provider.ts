import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { EffectAdapter, EffectObservation, EffectTarget } from '../../frontier/effect-adapter.js';
import { CodedError } from '../../base/index.js';
import { digestOf } from '../../store/index.js';

/**
 * A small provider on loopback for the Host's observation tests (docs/effects.md, "Observations"):
 * versioned targets served with an ETag, every answer naming the endpoint's identity in a header,
 * an operation honouring an `Idempotency-Key` with a lookup by key (`keyed`), and one with no
 * lookup at all (`plain`). It counts the operations it performs. Fault switches change the world
 * after a given number of target reads, so a test places a change between two of the Host's
 * observations (compile, admission, the re-check before perform) without timing.
 */

export const IDENTITY_HEADER = 'x-provider-identity';

/** A receipt as the provider keeps it: the input digest the client sent is stored with it. */
export const ProviderReceipt = z.object({
  key: z.string().nullable(),
  operation: z.enum(['keyed', 'plain']),
  target: z.string(),
  inputDigest: z.string(),
  seq: z.number().int().positive(),
});
export type ProviderReceipt = z.infer<typeof ProviderReceipt>;

/** What changes after the `afterReads`-th read of a target (then the switch is spent). */
export interface ProviderFault {
  afterReads: number;
  /** `unavailable`: that one read answers 503. */
  change: 'target' | 'identity' | 'capabilities' | 'unavailable';
}

export interface ObservedProvider {
  readonly url: string;
  /** Operations performed (an idempotent replay under a known key is not one). */
  readonly performs: ProviderReceipt[];
  /** Makes the next perform commit and then drop its answer (the socket is destroyed). */
  dropNextAnswer(): void;
  /** Arms a change of the world after a number of target reads. */
  fault(fault: ProviderFault): void;
  /** Writes a receipt under `key` as another client would, performing it. */
  seed(key: string, target: string, inputDigest: string): void;
  stop(): Promise<void>;
}

const PerformBody = z.object({
  target: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  inputDigest: z.string(),
});

export async function startObservedProvider(): Promise<ObservedProvider> {
  const versions = new Map<string, number>();
  const receipts = new Map<string, ProviderReceipt>();
  const performs: ProviderReceipt[] = [];
  let identity = 'provider-key-1';
  let lookupWindowMs = 60_000;
  let reads = 0;
  let armed: ProviderFault | undefined;
  let drop = false;

  const perform = (key: string | null, operation: 'keyed' | 'plain', target: string, inputDigest: string) => {
    const receipt = { key, operation, target, inputDigest, seq: performs.length + 1 };
    performs.push(receipt);
    versions.set(target, (versions.get(target) ?? 0) + 1);
    if (key !== null) receipts.set(key, receipt);
    return receipt;
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', [IDENTITY_HEADER]: identity, ...headers });
    res.end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://provider');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const [, area, name, rest] = url.pathname.split('/');
    if (req.method === 'GET' && area === 'targets' && name) {
      reads++;
      if (armed && reads > armed.afterReads) {
        if (armed.change === 'target') versions.set(name, (versions.get(name) ?? 0) + 1);
        if (armed.change === 'identity') identity = 'provider-key-2';
        if (armed.change === 'capabilities') lookupWindowMs = 1_000;
        const unavailable = armed.change === 'unavailable';
        armed = undefined;
        if (unavailable) return send(res, 503, { error: 'provider_unavailable' });
      }
      const version = versions.get(name);
      if (version === undefined) return send(res, 404, { error: 'provider_target_absent' });
      return send(res, 200, { target: name, version }, { etag: `"v${version}"` });
    }
    if (req.method === 'GET' && area === 'capabilities' && name) {
      const keyed = name === 'keyed';
      return send(res, 200, {
        idempotency: keyed ? 'key' : 'none',
        lookup: keyed,
        lookupWindowMs: keyed ? lookupWindowMs : null,
      });
    }
    if (req.method === 'GET' && area === 'ops' && name === 'keyed' && rest) {
      const found = receipts.get(decodeURIComponent(rest));
      return send(res, 200, { receipts: found ? [found] : [] });
    }
    if (req.method === 'POST' && area === 'ops' && (name === 'keyed' || name === 'plain')) {
      const body = PerformBody.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'));
      if (!body.success) return send(res, 400, { error: 'provider_invalid_request' });
      const key = name === 'keyed' ? (req.headers['idempotency-key'] as string | undefined) : null;
      if (name === 'keyed' && !key) return send(res, 400, { error: 'provider_key_missing' });
      // An idempotent replay answers the stored receipt, whatever input came with the key.
      const receipt = (key && receipts.get(key)) || perform(key ?? null, name, body.data.target, body.data.inputDigest);
      if (drop) {
        drop = false;
        return void res.socket?.destroy();
      }
      return send(res, 200, receipt);
    }
    return send(res, 404, { error: 'provider_route_not_found' });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => send(res, 500, { error: 'provider_failed' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    performs,
    dropNextAnswer: () => void (drop = true),
    fault: (fault) => void (armed = fault),
    seed: (key, target, inputDigest) => void perform(key, 'keyed', target, inputDigest),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A refusal the provider answered with a 4xx: it proves nothing was performed. */
class ProviderRefusal extends CodedError<string> {}

/**
 * The Effect adapter over the provider: `keyed` sends the Effect's request id as the
 * `Idempotency-Key` and can look it up; `plain` has no lookup at all. `observe` reads the target's
 * ETag and the endpoint's identity header, and the operation's declared capabilities.
 * `lookup: 'declines'` gives a lookup that resolves null (the window passed).
 */
export function observedAdapter(url: string, options: { lookup?: 'keyed' | 'none' | 'declines' } = {}): EffectAdapter {
  const lookup = options.lookup ?? 'keyed';
  const observe = async ({ operation, target }: EffectTarget): Promise<EffectObservation> => {
    const read = await fetch(`${url}/targets/${encodeURIComponent(target)}`);
    await read.arrayBuffer();
    // Only a 404 says the target is absent; any other failure is no observation at all.
    if (read.status !== 200 && read.status !== 404) throw new Error(`target read answered HTTP ${read.status}`);
    const capabilities = await (await fetch(`${url}/capabilities/${encodeURIComponent(operation)}`)).json();
    return {
      endpointIdentity: read.headers.get(IDENTITY_HEADER) ?? '',
      targetVersion: read.status === 404 ? null : read.headers.get('etag'),
      capabilities: capabilities as EffectObservation['capabilities'],
    };
  };
  const adapter: EffectAdapter = {
    endpoint: url,
    async perform(requestId, input, { operation, target }) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (operation === 'keyed') headers['idempotency-key'] = requestId;
      const answer = await fetch(`${url}/ops/${operation}`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ target, input, inputDigest: digestOf(input) }),
      });
      const body = (await answer.json()) as { error?: string };
      if (answer.status >= 400) throw new ProviderRefusal(body.error ?? 'provider_refused', `HTTP ${answer.status}`);
      return body;
    },
    notPerformed: (error) => error instanceof ProviderRefusal,
    observe,
    receiptInputDigest: (receipt) => ProviderReceipt.safeParse(receipt).data?.inputDigest,
  };
  if (lookup === 'keyed')
    adapter.lookup = async (requestId) => {
      const answer = await fetch(`${url}/ops/keyed/${encodeURIComponent(requestId)}`);
      return ((await answer.json()) as { receipts: unknown[] }).receipts;
    };
  if (lookup === 'declines') adapter.lookup = async () => null;
  return adapter;
}
