import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import {
  HTTP_EFFECT_CODES,
  HttpEffectError,
  httpEffectAdapter,
  type HttpEffectAdapterConfig,
  type HttpEffectCode,
} from '../../adapters/index.js';
import { digestOf } from '../../store/index.js';
import {
  performCounts,
  providerAdapterConfig,
  providerEffectAdapter,
  putTarget,
  readProviderRecords,
  releaseHeld,
  setProviderFaults,
  startProvider,
  type StartProviderOptions,
} from '../../workloads/world-w1/provider/index.js';
import { DOCUMENTED_CODES } from '../reliability/documented-codes.js';
import { rejectsWith } from '../support/rejects-with.js';
import { stoppedAfter } from '../support/stopped-after.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';

const CHILD = fileURLToPath(new URL('./perform-child.js', import.meta.url));

// The generic HTTP adapter, configured for World W1's provider, against the real provider process.
// Every count is read from the provider's records file.

const startTracked = stoppedAfter(startProvider, (p) => releaseHeld(p.url));

async function world(options: Partial<StartProviderOptions> = {}, timeoutMs = 5000) {
  const p = await startTracked({ dir: tempDir('ordivon-w1-adapter-'), identity: 'key-one', ...options });
  await putTarget(p.url, 'acct-1', { balance: 100 });
  const idFile = join(tempDir('ordivon-w1-host-'), 'transfer-ids.jsonl');
  return { p, idFile, adapter: providerEffectAdapter({ url: p.url, idFile, timeoutMs }) };
}

const intent = (operation: string) => ({ operation, target: 'acct-1' });
const input = (reference: string) => ({ reference, amount: 5 });

const rejection = (promise: Promise<unknown>, code: HttpEffectCode) => rejectsWith(promise, HttpEffectError, code);

describe('the HTTP Effect adapter against World W1 provider', () => {
  it('orders: the request id is the Idempotency-Key; performing again replays, the file holds one perform, the receipt names the input digest', async () => {
    const { p, adapter } = await world();
    const first = await adapter.perform('req-1', input('o-1'), intent('orders'));
    const again = await adapter.perform('req-1', input('o-1'), intent('orders'));
    assert.deepEqual(again, first);
    assert.equal(adapter.receiptInputDigest(first), digestOf(input('o-1')));
    const records = readProviderRecords(p.dir);
    assert.deepEqual(performCounts(records).orders, { 'o-1': 1 });
    assert.equal(records[0]!.idempotencyKey, 'req-1');
    assert.deepEqual(await adapter.lookup('req-1', intent('orders')), [first]);
    assert.deepEqual(await adapter.lookup('req-2', intent('orders')), []);
  });

  for (const operation of ['orders', 'transfers', 'messages'] as const) {
    it(`${operation}: after commit-then-drop perform is http_effect_no_answer (notPerformed false) and the file holds one perform`, async () => {
      const { p, adapter } = await world();
      await setProviderFaults(p.url, { drop: { operations: [operation], times: 1 } });
      const lost = await rejection(adapter.perform('req-1', input('r-1'), intent(operation)), 'http_effect_no_answer');
      assert.equal(adapter.notPerformed(lost), false);
      assert.deepEqual(performCounts(readProviderRecords(p.dir))[operation], { 'r-1': 1 });
      const found = await adapter.lookup('req-1', intent(operation));
      if (operation === 'orders') {
        assert.equal(found?.length, 1, 'the lookup finds exactly the one perform');
        assert.equal(adapter.receiptInputDigest(found![0]), digestOf(input('r-1')));
      } else assert.equal(found, null, `${operation}: the lost answer cannot be looked up`);
    });
  }

  it('orders: a lookup after the retention window passed resolves null (the provider no longer says)', async () => {
    const { p, adapter } = await world({ retentionMs: 60_000 });
    await setProviderFaults(p.url, { drop: { operations: ['orders'], times: 1 } });
    await rejection(adapter.perform('req-1', input('o-1'), intent('orders')), 'http_effect_no_answer');
    await setProviderFaults(p.url, { advanceClockMs: 60_000 });
    assert.equal(await adapter.lookup('req-1', intent('orders')), null);
  });

  it('transfers: perform polls to succeeded; the id is on file before the poll, so an adapter made after a Host restart looks it up', async () => {
    const { p, adapter, idFile } = await world({ settleMs: 60_000 }, 300);
    // Pending past the adapter's deadline: the perform gives up polling, the id is already on file.
    await rejection(adapter.perform('req-1', input('t-1'), intent('transfers')), 'http_effect_no_answer');
    assert.match(readFileSync(idFile, 'utf8'), /"requestId":"req-1"/);
    const restarted = providerEffectAdapter({ url: p.url, idFile });
    const [pending, ...others] = (await restarted.lookup('req-1', intent('transfers')))!;
    assert.deepEqual([(pending as any).status, others], ['pending', []]);
    await setProviderFaults(p.url, { advanceClockMs: 60_000 });
    assert.equal(((await restarted.lookup('req-1', intent('transfers')))![0] as any).status, 'succeeded');
    assert.equal(await restarted.lookup('req-3', intent('transfers')), null, 'no id on file: the adapter cannot say');
    assert.deepEqual(performCounts(readProviderRecords(p.dir)).transfers, { 't-1': 1 });
  });

  it('transfers: the 202 answers pending and perform polls the status until it resolves with the succeeded receipt', async () => {
    const { p, adapter } = await world({ settleMs: 0 });
    const settled = await adapter.perform('req-1', input('t-1'), intent('transfers'));
    assert.equal((settled as any).status, 'succeeded');
    assert.equal(adapter.receiptInputDigest(settled), digestOf(input('t-1')));
    assert.deepEqual(await adapter.lookup('req-1', intent('transfers')), [settled]);
    assert.deepEqual(performCounts(readProviderRecords(p.dir)).transfers, { 't-1': 1 });
  });

  it('the provider-id file: a torn last line is ignored, a complete line that does not parse is http_effect_id_file_invalid', async () => {
    const { p, idFile } = await world();
    const adapter = providerEffectAdapter({ url: p.url, idFile });
    await adapter.perform('req-1', input('t-1'), intent('transfers'));
    appendFileSync(idFile, '{"requestId":"req-2","oper');
    assert.equal(((await adapter.lookup('req-1', intent('transfers')))![0] as any).reference, 't-1');
    assert.equal(await adapter.lookup('req-2', intent('transfers')), null);
    await adapter.perform('req-3', input('t-3'), intent('transfers'));
    assert.equal(
      (await adapter.lookup('req-3', intent('transfers')))!.length,
      1,
      'a line after a torn one stays whole',
    );
    writeFileSync(idFile, 'garbage\n');
    await rejection(adapter.lookup('req-1', intent('transfers')), 'http_effect_id_file_invalid');
  });

  for (const operation of ['orders', 'transfers', 'messages'] as const) {
    it(`${operation}: a client process SIGKILLed between intent and answer leaves one perform; a new adapter's lookup ${operation === 'messages' ? 'cannot say (null)' : 'finds it'}`, async () => {
      const { p, idFile } = await world({ settleMs: 600_000 });
      // Orders and messages: the answer is held; transfers: the 202 comes back and the client polls.
      if (operation !== 'transfers')
        await setProviderFaults(p.url, { delay: { operations: [operation], ms: 600_000, times: 1 } });
      const child = execa(process.execPath, [CHILD, p.url, idFile, 'req-1', operation, 'r-1'], { reject: false });
      await until('the perform is committed and the client waits', 20_000, async () => {
        if (operation === 'transfers')
          return existsSync(idFile) && readFileSync(idFile, 'utf8').includes('"req-1"') ? true : undefined;
        return (await setProviderFaults(p.url, {})).held === 1 ? true : undefined;
      });
      child.kill('SIGKILL');
      assert.equal((await child).signal, 'SIGKILL');
      assert.deepEqual(performCounts(readProviderRecords(p.dir))[operation], { 'r-1': 1 });
      const found = await providerEffectAdapter({ url: p.url, idFile }).lookup('req-1', intent(operation));
      if (operation === 'messages') assert.equal(found, null);
      else {
        assert.equal(found?.length, 1);
        assert.equal((found![0] as any).reference, 'r-1');
      }
    });
  }

  it('messages: lookup resolves null whatever happened', async () => {
    const { adapter } = await world();
    await adapter.perform('req-1', input('m-1'), intent('messages'));
    assert.equal(await adapter.lookup('req-1', intent('messages')), null);
  });

  it('a response delayed past the timeout is http_effect_no_answer although the perform committed', async () => {
    const { p, adapter } = await world({}, 300);
    await setProviderFaults(p.url, { delay: { operations: ['messages'], ms: 600_000, times: 1 } });
    const lost = await rejection(adapter.perform('req-1', input('m-1'), intent('messages')), 'http_effect_no_answer');
    assert.equal(adapter.notPerformed(lost), false);
    assert.deepEqual(performCounts(readProviderRecords(p.dir)).messages, { 'm-1': 1 });
  });

  it('observe reads identity, ETag and capabilities; a changed identity and a moved target are seen; a missing target is null', async () => {
    const { p, adapter } = await world({ retentionMs: 5000 });
    const seen = await adapter.observe(intent('orders'));
    assert.equal(seen.endpointIdentity, p.identity);
    assert.match(seen.targetVersion!, /^"sha256:[0-9a-f]{64}"$/);
    assert.deepEqual(seen.capabilities, { idempotency: 'key', lookup: true, lookupWindowMs: 5000 });
    assert.deepEqual((await adapter.observe(intent('messages'))).capabilities, {
      idempotency: 'none',
      lookup: false,
      lookupWindowMs: null,
    });
    await setProviderFaults(p.url, { identity: 'key-two', moveTarget: 'acct-1' });
    const now = await adapter.observe(intent('orders'));
    assert.notEqual(now.endpointIdentity, seen.endpointIdentity);
    assert.notEqual(now.targetVersion, seen.targetVersion);
    assert.equal((await adapter.observe({ operation: 'orders', target: 'acct-9' })).targetVersion, null);
    assert.deepEqual(readProviderRecords(p.dir), [], 'observe performs nothing');
  });

  it('If-Match on a moved target is refused 412: http_effect_refused, notPerformed true, nothing performed', async () => {
    const { p, adapter } = await world();
    const { targetVersion } = await adapter.observe(intent('orders'));
    await setProviderFaults(p.url, { moveTarget: 'acct-1' });
    const refused = await rejection(
      adapter.perform('req-1', { ...input('o-1'), ifMatch: targetVersion }, intent('orders')),
      'http_effect_refused',
    );
    assert.deepEqual([refused.status, refused.providerCode], [412, 'provider_target_changed']);
    assert.equal(adapter.notPerformed(refused), true);
    assert.deepEqual(readProviderRecords(p.dir), []);
  });

  it('a stopped provider is http_effect_unreachable (notPerformed true); an unknown operation is refused unsent', async () => {
    const { p, adapter } = await world();
    await rejection(adapter.perform('req-1', input('o-1'), intent('refunds')), 'http_effect_operation_unknown');
    await p.stop();
    const down = await rejection(adapter.perform('req-1', input('o-1'), intent('orders')), 'http_effect_unreachable');
    assert.equal(adapter.notPerformed(down), true);
    await rejection(adapter.lookup('req-1', intent('orders')), 'http_effect_lookup_failed');
    assert.deepEqual(readProviderRecords(p.dir), []);
  });

  it('a config whose data fields do not parse is http_effect_config_invalid naming the field', () => {
    const config = providerAdapterConfig({ url: 'http://127.0.0.1:1', idFile: '/tmp/x' });
    for (const [bad, path] of [
      [{ ...config, timeoutMs: 0 }, 'timeoutMs'],
      [{ ...config, baseUrl: 'ftp://x' }, 'baseUrl'],
      [
        { ...config, operations: { orders: { ...config.operations['orders']!, path: 'v1' } } },
        'operations.orders.path',
      ],
    ] as const) {
      assert.throws(
        () => httpEffectAdapter(bad),
        (error: any) => error.code === 'http_effect_config_invalid' && error.path === path,
      );
    }
  });

  it('documents every HTTP adapter code in the error table (docs/errors.md)', () => {
    assert.deepEqual(
      Object.keys(HTTP_EFFECT_CODES).filter((code) => !DOCUMENTED_CODES.has(code)),
      [],
    );
  });
});

describe("the HTTP Effect adapter reads a provider's error code where its config says", () => {
  /** A provider of one's own that nests its error code (`{"error": {"code": …}}`), as many do. */
  async function nestingProvider(): Promise<{ url: string; close: () => Promise<void> }> {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(402, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'top_level', error: { code: 'card_declined', number: 1001 } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
  }

  const config = (baseUrl: string, errorCode?: HttpEffectAdapterConfig['errorCode']): HttpEffectAdapterConfig => ({
    baseUrl,
    timeoutMs: 5000,
    identityHeader: 'Provider-Identity',
    discovery: { path: '/', capabilities: () => ({}) },
    targetPath: (target) => `/targets/${target}`,
    operations: { charges: { path: '/charges', body: (call) => call.input, idempotency: { style: 'none' } } },
    refusal: (status) => status === 402,
    ...(errorCode === undefined ? {} : { errorCode }),
  });

  const cases: Array<[string, HttpEffectAdapterConfig['errorCode'], string | undefined]> = [
    ['a top-level code by default', undefined, 'top_level'],
    ['a dotted path into the body', 'error.code', 'card_declined'],
    ['a number, as its decimal text', 'error.number', '1001'],
    ['nothing at the path', 'error.missing.code', undefined],
    [
      'a function of the body',
      (body) => (body as { error: { code: string } }).error.code.toUpperCase(),
      'CARD_DECLINED',
    ],
  ];
  for (const [what, errorCode, expected] of cases)
    it(`providerCode is ${what}`, async () => {
      const provider = await nestingProvider();
      try {
        const adapter = httpEffectAdapter(config(provider.url, errorCode));
        const refused = await rejection(
          adapter.perform('req-1', { amount: 5 }, { operation: 'charges', target: 'card-1' }),
          'http_effect_refused',
        );
        assert.deepEqual([refused.status, refused.providerCode], [402, expected]);
        assert.equal(adapter.notPerformed(refused), true);
      } finally {
        await provider.close();
      }
    });

  it('refuses an errorCode that is no dotted path: http_effect_config_invalid naming errorCode', () => {
    for (const bad of ['', 'error..code', '.code']) {
      try {
        httpEffectAdapter(config('http://127.0.0.1:9', bad));
        assert.fail(`${JSON.stringify(bad)} was taken`);
      } catch (error) {
        assert.ok(error instanceof HttpEffectError, String(error));
        assert.deepEqual([error.code, error.path], ['http_effect_config_invalid', 'errorCode']);
      }
    }
  });
});
