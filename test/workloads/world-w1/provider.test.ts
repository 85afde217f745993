import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import {
  PROVIDER_CODES,
  performCounts,
  providerRecords,
  putTarget,
  readProviderRecords,
  RECORDS_FILE,
  releaseHeld,
  setProviderFaults,
  startProvider,
  type ProviderProcess,
  type StartProviderOptions,
} from '../../../workloads/world-w1/provider/index.js';
import { DOCUMENTED_CODES } from '../../reliability/documented-codes.js';
import { stoppedAfter } from '../../support/stopped-after.js';
import { tempDir } from '../../support/temp.js';
import { until } from '../../support/until.js';

// World W1's provider as a real server process on a real records file. Every count is read from
// the file (readProviderRecords), whatever the server answered; ordering comes from awaited
// answers, the server's own fault state and process exits, never from sleeps.

const DIGEST = `sha256:${'ab'.repeat(32)}`;

const startTracked = stoppedAfter(startProvider, (p) => releaseHeld(p.url));

async function provider(options: Partial<StartProviderOptions> = {}): Promise<ProviderProcess> {
  const p = await startTracked({ dir: tempDir('ordivon-w1-provider-'), identity: 'key-one', ...options });
  await putTarget(p.url, 'acct-1', { balance: 100 });
  return p;
}

interface Sent {
  status: number;
  headers: Headers;
  body: any;
}

async function post(
  p: ProviderProcess,
  operation: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Sent> {
  const res = await fetch(new URL(`/v1/${operation}`, p.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'input-digest': DIGEST, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

async function get(p: ProviderProcess, path: string): Promise<Sent> {
  const res = await fetch(new URL(path, p.url));
  return { status: res.status, headers: res.headers, body: await res.json() };
}

const order = (reference: string, data: unknown = { amount: 5 }) => ({ reference, target: 'acct-1', data });

describe('World W1 provider: orders (Idempotency-Key)', () => {
  it('performs once per key: the same key and body replays the stored answer marked Idempotent-Replayed, another body is 422', async () => {
    const p = await provider();
    const first = await post(p, 'orders', order('o-1'), { 'idempotency-key': 'k-1' });
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    assert.equal(first.body.inputDigest, DIGEST);
    assert.equal(first.body.status, 'succeeded');
    const replay = await post(p, 'orders', order('o-1'), { 'idempotency-key': 'k-1' });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, first.body);
    const reused = await post(p, 'orders', order('o-1', { amount: 6 }), { 'idempotency-key': 'k-1' });
    assert.equal(reused.status, 422);
    assert.deepEqual(
      [reused.body.code, reused.body.path],
      ['provider_idempotency_key_reused', 'headers.idempotency-key'],
    );
    const records = readProviderRecords(p.dir);
    assert.equal(records.length, 1);
    assert.deepEqual(performCounts(records).orders, { 'o-1': 1 });
    assert.equal(records[0]!.idempotencyKey, 'k-1');
    const file = new Database(join(p.dir, RECORDS_FILE), { readonly: true });
    assert.equal(file.pragma('journal_mode', { simple: true }), 'wal');
    file.close();
  });

  it('a lookup by key answers the receipt, 404 for an unknown key, and 410 provider_lookup_expired once the clock passes the window', async () => {
    const p = await provider({ retentionMs: 60_000 });
    const { body: receipt } = await post(p, 'orders', order('o-1'), { 'idempotency-key': 'k-1' });
    assert.deepEqual((await get(p, '/v1/idempotency/k-1')).body, receipt);
    const none = await get(p, '/v1/idempotency/k-2');
    assert.deepEqual([none.status, none.body.code], [404, 'provider_not_found']);
    await setProviderFaults(p.url, { advanceClockMs: 60_000 });
    const expired = await get(p, '/v1/idempotency/k-1');
    assert.deepEqual([expired.status, expired.body.code], [410, 'provider_lookup_expired']);
    // Past the window the key is forgotten: the same request performs a second time.
    const again = await post(p, 'orders', order('o-1'), { 'idempotency-key': 'k-1' });
    assert.equal(again.status, 201);
    assert.notEqual(again.body.id, receipt.id);
    assert.deepEqual(performCounts(readProviderRecords(p.dir)).orders, { 'o-1': 2 });
  });

  it('without a key every POST performs (the key is what makes it idempotent)', async () => {
    const p = await provider();
    await post(p, 'orders', order('o-1'));
    await post(p, 'orders', order('o-1'));
    assert.deepEqual(performCounts(readProviderRecords(p.dir)).orders, { 'o-1': 2 });
  });
});

describe('World W1 provider: transfers (provider id) and messages (no lookup)', () => {
  it('a transfer answers 202 with its id and Location, stays pending until the settle time passes on the provider clock, then succeeded', async () => {
    const p = await provider({ settleMs: 10_000 });
    const accepted = await post(p, 'transfers', order('t-1'));
    assert.equal(accepted.status, 202);
    assert.equal(accepted.body.status, 'pending');
    assert.equal(accepted.headers.get('location'), `/v1/transfers/${accepted.body.id}`);
    assert.equal((await get(p, `/v1/transfers/${accepted.body.id}`)).body.status, 'pending');
    await setProviderFaults(p.url, { advanceClockMs: 10_000 });
    const settled = await get(p, `/v1/transfers/${accepted.body.id}`);
    assert.deepEqual([settled.body.status, settled.body.inputDigest], ['succeeded', DIGEST]);
    const missing = await get(p, '/v1/transfers/tr_999');
    assert.deepEqual([missing.status, missing.body.code], [404, 'provider_not_found']);
    // An idempotency key is not honoured by transfers: a second POST with one is a second transfer.
    await post(p, 'transfers', order('t-1'), { 'idempotency-key': 'k-1' });
    await post(p, 'transfers', order('t-1'), { 'idempotency-key': 'k-1' });
    assert.deepEqual(performCounts(readProviderRecords(p.dir)).transfers, { 't-1': 3 });
  });

  it('a message answers 201 and has no lookup route; a key does not dedupe it', async () => {
    const p = await provider();
    const sent = await post(p, 'messages', order('m-1'), { 'idempotency-key': 'k-1' });
    assert.equal(sent.status, 201);
    assert.equal(sent.body.object, 'message');
    const lookup = await get(p, `/v1/messages/${sent.body.id}`);
    assert.deepEqual([lookup.status, lookup.body.code], [404, 'provider_route_not_found']);
    await post(p, 'messages', order('m-1'), { 'idempotency-key': 'k-1' });
    assert.deepEqual(performCounts(readProviderRecords(p.dir)).messages, { 'm-1': 2 });
  });

  it('GET /.well-known/provider declares each operation: orders key + window, transfers provider-id, messages none', async () => {
    const p = await provider({ retentionMs: 5000 });
    const { body, headers } = await get(p, '/.well-known/provider');
    assert.equal(headers.get('provider-identity'), p.identity);
    assert.deepEqual(body, {
      identity: p.identity,
      capabilities: {
        orders: { idempotency: 'key', lookup: true, lookupWindowMs: 5000 },
        transfers: { idempotency: 'provider-id', lookup: true, lookupWindowMs: null },
        messages: { idempotency: 'none', lookup: false, lookupWindowMs: null },
      },
    });
  });
});

describe('World W1 provider: fault switches', () => {
  for (const operation of ['orders', 'transfers', 'messages'] as const) {
    it(`drop on ${operation}: the POST gets no answer, yet the records file holds exactly one perform; the next POST is answered`, async () => {
      const p = await provider();
      const state = await setProviderFaults(p.url, { drop: { operations: [operation], times: 1 } });
      assert.deepEqual(state.drop, { operations: [operation], remaining: 1 });
      await assert.rejects(post(p, operation, order('r-1'), { 'idempotency-key': 'k-1' }), TypeError);
      assert.deepEqual(performCounts(readProviderRecords(p.dir))[operation], { 'r-1': 1 });
      assert.equal((await post(p, operation, order('r-2'))).status < 300, true);
      assert.equal((await setProviderFaults(p.url, {})).drop, null, 'the switch turned itself off');
    });
  }

  it('delay holds the answer of a committed perform until released: the record is in the file while the caller still waits', async () => {
    const p = await provider();
    await setProviderFaults(p.url, { delay: { operations: ['orders'], ms: 600_000, times: 1 } });
    const pending = post(p, 'orders', order('o-1'), { 'idempotency-key': 'k-1' });
    await until('the answer is held', 10_000, async () =>
      (await setProviderFaults(p.url, {})).held === 1 ? true : undefined,
    );
    assert.deepEqual(performCounts(readProviderRecords(p.dir)).orders, { 'o-1': 1 });
    assert.equal((await releaseHeld(p.url)).held, 0);
    assert.equal((await pending).status, 201);
  });

  it('identity: every answer carries the fingerprint of the other key until switched back', async () => {
    const p = await provider();
    const changed = await setProviderFaults(p.url, { identity: 'key-two' });
    assert.equal(changed.identityChanged, true);
    assert.notEqual(changed.identity, p.identity);
    const discovery = await get(p, '/.well-known/provider');
    assert.equal(discovery.headers.get('provider-identity'), changed.identity);
    assert.equal(discovery.body.identity, changed.identity);
    const sent = await post(p, 'orders', order('o-1'));
    assert.equal(sent.headers.get('provider-identity'), changed.identity);
    const back = await setProviderFaults(p.url, { identity: null });
    assert.deepEqual([back.identity, back.identityChanged], [p.identity, false]);
  });

  it('moveTarget changes the content and the ETag; If-Match with the old one is 412 provider_target_changed and performs nothing', async () => {
    const p = await provider();
    const before = await get(p, '/v1/targets/acct-1');
    assert.equal(before.headers.get('etag'), `"${before.body.version}"`);
    await setProviderFaults(p.url, { moveTarget: 'acct-1' });
    const moved = await get(p, '/v1/targets/acct-1');
    assert.notEqual(moved.body.version, before.body.version);
    assert.deepEqual(moved.body.content.was, { balance: 100 });
    for (const operation of ['orders', 'transfers', 'messages']) {
      const stale = await post(p, operation, order('r-1'), { 'if-match': before.headers.get('etag')! });
      assert.deepEqual(
        [stale.status, stale.body.code, stale.body.path],
        [412, 'provider_target_changed', 'headers.if-match'],
      );
    }
    const put = await fetch(new URL('/v1/targets/acct-1', p.url), {
      method: 'PUT',
      headers: { 'if-match': before.headers.get('etag')! },
      body: JSON.stringify({ content: { balance: 0 } }),
    });
    assert.equal(put.status, 412);
    assert.deepEqual(readProviderRecords(p.dir), []);
    const fresh = await post(p, 'orders', order('r-1'), { 'if-match': moved.headers.get('etag')! });
    assert.equal(fresh.status, 201);
    assert.equal(fresh.body.targetVersion, moved.body.version);
  });

  it('advanceClockMs survives a provider restart; the switches do not', async () => {
    const p = await provider({ retentionMs: 60_000 });
    await post(p, 'orders', order('o-1'), { 'idempotency-key': 'k-1' });
    await setProviderFaults(p.url, { advanceClockMs: 60_000, drop: { operations: ['orders'] }, identity: 'key-two' });
    const { pid, url } = p;
    await p.restart();
    assert.notEqual(p.pid, pid);
    assert.equal(p.url, url);
    const state = await setProviderFaults(p.url, {});
    assert.deepEqual([state.drop, state.identityChanged], [null, false]);
    assert.equal((await get(p, '/v1/idempotency/k-1')).status, 410);
  });

  it('provider restart: records and keys committed before a SIGKILL are there after a start on the same directory', async () => {
    const p = await provider();
    const { body: receipt } = await post(p, 'orders', order('o-1'), { 'idempotency-key': 'k-1' });
    await post(p, 'messages', order('m-1'));
    assert.deepEqual(await p.kill(), { exitCode: undefined, signal: 'SIGKILL' });
    assert.equal(readProviderRecords(p.dir).length, 2, 'the commits survived SIGKILL');
    await p.restart();
    const replay = await post(p, 'orders', order('o-1'), { 'idempotency-key': 'k-1' });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, receipt);
    assert.deepEqual(await providerRecords(p.url), readProviderRecords(p.dir));
    assert.equal(readProviderRecords(p.dir).length, 2);
  });
});

describe('World W1 provider: refusals', () => {
  it('bad bodies, headers, path parameters and fault switches are 400 with the field path, and change nothing', async () => {
    const p = await provider();
    const ok = order('o-1');
    const cases: Array<
      [method: string, path: string, body: string | undefined, headers: Record<string, string>, field: string]
    > = [
      ['POST', '/v1/orders', 'not json', { 'input-digest': DIGEST }, '(root)'],
      ['POST', '/v1/orders', JSON.stringify(ok), {}, 'headers.input-digest'],
      ['POST', '/v1/orders', JSON.stringify(ok), { 'input-digest': 'sha256:x' }, 'headers.input-digest'],
      [
        'POST',
        '/v1/orders',
        JSON.stringify(ok),
        { 'input-digest': DIGEST, 'idempotency-key': 'a b' },
        'headers.idempotency-key',
      ],
      ['POST', '/v1/orders', JSON.stringify({ ...ok, reference: '' }), { 'input-digest': DIGEST }, 'reference'],
      ['POST', '/v1/transfers', JSON.stringify({ ...ok, target: 7 }), { 'input-digest': DIGEST }, 'target'],
      ['POST', '/v1/messages', JSON.stringify({ ...ok, amount: 1 }), { 'input-digest': DIGEST }, 'amount'],
      ['GET', '/v1/idempotency/a%20b', undefined, {}, 'path.key'],
      ['GET', '/v1/transfers/%E0%A4%A', undefined, {}, 'path'],
      ['PUT', '/v1/targets/acct-1', JSON.stringify({ contents: 1 }), {}, 'contents'],
      ['POST', '/_faults', JSON.stringify({ drop: { operations: ['refunds'] } }), {}, 'drop.operations.0'],
      ['POST', '/_faults', JSON.stringify({ delay: { ms: 0 } }), {}, 'delay.ms'],
      ['POST', '/_faults', JSON.stringify({ advanceClockMs: -1 }), {}, 'advanceClockMs'],
    ];
    for (const [method, path, body, headers, field] of cases) {
      const res = await fetch(new URL(path, p.url), { method, headers, ...(body === undefined ? {} : { body }) });
      const answer = (await res.json()) as any;
      assert.equal(res.status, 400, `${method} ${path} ${body}`);
      assert.deepEqual([answer.code, answer.path], ['provider_invalid_request', field], `${method} ${path} ${body}`);
      assert.equal(typeof answer.message, 'string');
      assert.ok(res.headers.get('provider-identity'), 'refusals carry the identity too');
    }
    const missing = await post(p, 'orders', { ...ok, target: 'acct-9' });
    assert.deepEqual(
      [missing.status, missing.body.code, missing.body.path],
      [404, 'provider_target_not_found', 'target'],
    );
    const moveMissing = await fetch(new URL('/_faults', p.url), {
      method: 'POST',
      body: JSON.stringify({ moveTarget: 'acct-9', drop: { operations: ['orders'] } }),
    });
    assert.equal(moveMissing.status, 404);
    const tooLarge = await post(p, 'orders', 'x'.repeat(1024 * 1024 + 1));
    assert.deepEqual([tooLarge.status, tooLarge.body.code], [413, 'provider_body_too_large']);
    const unknown = await get(p, '/v1/refunds');
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'provider_route_not_found']);
    assert.deepEqual(readProviderRecords(p.dir), []);
    const faults = await setProviderFaults(p.url, {});
    assert.deepEqual([faults.drop, faults.delay], [null, null], 'the refused switches changed nothing');
  });

  it('a bad command line exits 2 with provider_usage; an unusable directory is provider_start_failed', async () => {
    const server = fileURLToPath(new URL('../../../workloads/world-w1/provider/server.js', import.meta.url));
    const dir = tempDir('ordivon-w1-provider-');
    for (const args of [['--dir', dir], ['--dir', dir, '--identity', 'k', '--retention-ms', '0'], ['--bogus']]) {
      const result = await execa(process.execPath, [server, ...args], { reject: false });
      assert.equal(result.exitCode, 2, args.join(' '));
      assert.equal(JSON.parse(result.stderr).code, 'provider_usage');
    }
    const file = join(dir, 'a-file');
    await execa('touch', [file]);
    await assert.rejects(startProvider({ dir: file, identity: 'k' }), (error: any) => {
      assert.equal(error.code, 'provider_start_failed');
      return true;
    });
  });

  it('documents every provider code in the error table (docs/errors.md)', () => {
    assert.deepEqual(
      Object.keys(PROVIDER_CODES).filter((code) => !DOCUMENTED_CODES.has(code)),
      [],
    );
  });
});
