import { digestOf } from '../../../store/index.js';
import {
  Discovery,
  performCounts,
  putTarget,
  readProviderRecords,
  releaseHeld,
  setProviderFaults,
  type Operation,
  type ProviderProcess,
} from '../provider/index.js';
import { resultRow, W1Fault, type W1ResultRow } from './result-row.js';
import {
  ANSWER_WAIT_MS,
  BASELINE_VARIANTS,
  runPlainClient,
  type BaselineVariant,
  type PlainClient,
} from './client-loop.js';

/** The faults the baselines run: every W1 fault. */
export const BASELINE_FAULTS = W1Fault.options;
export type BaselineFault = (typeof BASELINE_FAULTS)[number];

export const OPERATIONS = ['orders', 'transfers', 'messages'] as const satisfies readonly Operation[];

export interface BaselineOptions {
  /** A running provider; `provider-restart` restarts it, and every trajectory leaves its switches off. */
  provider: ProviderProcess;
  /**
   * The client's timeout for the send whose answer the fault holds (`delay-past-timeout`,
   * `host-sigkill`: default 1000 ms). Every other send waits up to `ANSWER_WAIT_MS`, so only a
   * fault loses an answer, never a slow machine.
   */
  timeoutMs?: number;
  /** How many sends a client makes at most (default 3). */
  maxSends?: number;
}

type Sent = { kind: 'answer'; status: number; body: unknown } | { kind: 'lost' };

async function send(
  url: string,
  operation: Operation,
  body: unknown,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<Sent> {
  try {
    const res = await fetch(new URL(`/v1/${operation}`, url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { kind: 'answer', status: res.status, body: await res.json().catch(() => undefined) };
  } catch {
    return { kind: 'lost' };
  }
}

/** A lookup the way variant (c) makes it: `found`, `absent` (the provider says so), or `unknown`. */
async function lookUp(
  url: string,
  operation: Operation,
  key: string,
  providerId: string | undefined,
): Promise<'found' | 'absent' | 'unknown'> {
  const path =
    operation === 'orders'
      ? `/v1/idempotency/${encodeURIComponent(key)}`
      : operation === 'transfers' && providerId !== undefined
        ? `/v1/transfers/${encodeURIComponent(providerId)}`
        : undefined;
  if (path === undefined) return 'unknown';
  try {
    const res = await fetch(new URL(path, url));
    return res.status === 200 ? 'found' : res.status === 404 ? 'absent' : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * One trajectory: the client observes the target and the endpoint, the fault strikes, the client
 * sends and recovers the way its variant does (runPlainClient); the row's performs are read from
 * the records file.
 */
export async function runBaseline(
  options: BaselineOptions,
  variant: BaselineVariant,
  operation: Operation,
  fault: BaselineFault,
): Promise<W1ResultRow> {
  const { provider } = options;
  const timeoutMs = options.timeoutMs ?? 1000;
  const reference = `${variant}.${operation}.${fault}`;
  const target = `target.${reference}`;
  const input = { reference, amount: 5 };
  const body = { reference, target, data: input };
  const inputDigest = digestOf(input);
  await putTarget(provider.url, target, { balance: 100 });
  const discovery = Discovery.parse(await (await fetch(new URL('/.well-known/provider', provider.url))).json());
  const windowMs = discovery.capabilities.orders.lookupWindowMs ?? 0;

  // What changes between the client's observation and its send.
  if (fault === 'identity-changed') await setProviderFaults(provider.url, { identity: `${reference}.other-key` });
  if (fault === 'target-changed') await setProviderFaults(provider.url, { moveTarget: target });
  // What loses the first send's answer after its commit.
  if (fault === 'commit-then-drop' || fault === 'provider-restart' || fault === 'lookup-expired')
    await setProviderFaults(provider.url, { drop: { operations: [operation], times: 1 } });
  if (fault === 'delay-past-timeout' || fault === 'host-sigkill')
    await setProviderFaults(provider.url, { delay: { operations: [operation], ms: 600_000, times: 1 } });

  let windowPassed = false;
  const client: PlainClient = {
    async send(key, held) {
      const headers = { 'input-digest': inputDigest, 'idempotency-key': key };
      const sent = await send(provider.url, operation, body, headers, held ? timeoutMs : ANSWER_WAIT_MS);
      if (sent.kind === 'lost') return 'lost';
      return sent.status >= 200 && sent.status < 300 ? 'done' : 'refused';
    },
    lookUp: (key) => lookUp(provider.url, operation, key, undefined),
    async incident() {
      if (fault === 'provider-restart') await provider.restart();
      if (fault === 'lookup-expired') {
        await setProviderFaults(provider.url, { advanceClockMs: windowMs });
        windowPassed = true;
      }
    },
    deduplicates: () => operation === 'orders' && !windowPassed,
  };
  const { started, ...run } = await runPlainClient(variant, fault, reference, client, options.maxSends ?? 3);

  await releaseHeld(provider.url);
  await setProviderFaults(provider.url, { drop: null, delay: null, identity: null });
  const performs = performCounts(readProviderRecords(provider.dir))[operation][reference] ?? 0;
  return resultRow(
    { variant, operation, fault, ...run, operatorInterventions: 0, elapsedMs: Date.now() - started },
    performs,
  );
}

/** Every baseline trajectory (each variant × operation × fault) in turn, one row each. */
export async function runBaselines(
  options: BaselineOptions,
  select: {
    variants?: readonly BaselineVariant[];
    operations?: readonly Operation[];
    faults?: readonly BaselineFault[];
  } = {},
): Promise<W1ResultRow[]> {
  const rows: W1ResultRow[] = [];
  for (const variant of select.variants ?? BASELINE_VARIANTS)
    for (const operation of select.operations ?? OPERATIONS)
      for (const fault of select.faults ?? BASELINE_FAULTS)
        rows.push(await runBaseline(options, variant, operation, fault));
  return rows;
}
