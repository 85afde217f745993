import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { pidExists } from '../../os/index.js';
import { digestOf } from '../../store/canonical.js';
import {
  LEDGER_CODES,
  LedgerError,
  ledgerAdapter,
  ledgerEntries,
  readLedgerFile,
  setLedgerFault,
  startLedger,
  type LedgerCode,
  type LedgerProcess,
  type StartLedgerOptions,
} from '../../workloads/round1-v1/ledger/index.js';
import { DOCUMENTED_CODES } from '../reliability/documented-codes.js';
import { rejectsWith } from '../support/rejects-with.js';
import { stoppedAfter } from '../support/stopped-after.js';
import { tempDir } from '../support/temp.js';

// The Round 1 ledger backend with real server processes on real database files. Every count is
// read from the ledger's own file (readLedgerFile), whatever the server answered; ordering comes
// from awaited answers and process exits, never from sleeps.

const MAINTENANCE = {
  operation: 'apply-v1',
  target: 'round1-v1/src/client.js',
  input: { tool: 'migrate-v1', schemaVersion: 1 },
};

const ledger = stoppedAfter((options: Omit<StartLedgerOptions, 'db'> = {}): Promise<LedgerProcess> =>
  startLedger({ db: join(tempDir('ordivon-ledger-'), 'ledger.db'), ...options }),
);

const refusal = (promise: Promise<unknown>, code: LedgerCode) => rejectsWith(promise, LedgerError, code);

describe('the Round 1 ledger backend', () => {
  it('a perform appends one durable entry: lookup finds exactly its receipt, and so does the file (WAL)', async () => {
    const l = await ledger();
    const adapter = ledgerAdapter(l.url);
    const receipt = await adapter.perform('maint-1', MAINTENANCE);
    assert.equal(receipt.requestId, 'maint-1');
    assert.equal(receipt.inputDigest, digestOf(MAINTENANCE.input));
    assert.deepEqual(await adapter.lookup('maint-1'), [receipt]);
    assert.deepEqual(await adapter.lookup('maint-2'), []);
    assert.deepEqual(readLedgerFile(l.db), [receipt]);
    const file = new Database(l.db, { readonly: true });
    assert.equal(file.pragma('journal_mode', { simple: true }), 'wal');
    file.close();
  });

  it('the same request id performed twice appends two entries (the backend is not idempotent, on purpose)', async () => {
    const l = await ledger();
    const adapter = ledgerAdapter(l.url);
    const first = await adapter.perform('maint-1', MAINTENANCE);
    const second = await adapter.perform('maint-1', MAINTENANCE);
    assert.notEqual(first.seq, second.seq);
    assert.deepEqual(await adapter.lookup('maint-1'), [first, second]);
    assert.deepEqual(readLedgerFile(l.db), [first, second]);
  });

  for (const switched of ['at start', 'at runtime'] as const) {
    it(`commit-then-drop (switched ${switched}): the perform rejects effect_response_lost, yet the file holds the entry and lookup returns it`, async () => {
      const l = await ledger(switched === 'at start' ? { fault: 'commit-then-drop', faultTimes: 1 } : {});
      if (switched === 'at runtime')
        assert.deepEqual(await setLedgerFault(l.url, 'commit-then-drop', 1), {
          mode: 'commit-then-drop',
          remaining: 1,
        });
      const adapter = ledgerAdapter(l.url);
      const lost = await refusal(adapter.perform('maint-1', MAINTENANCE), 'effect_response_lost');
      assert.equal(lost.requestId, 'maint-1');
      assert.equal(lost.retryable, false);
      const [entry, ...others] = readLedgerFile(l.db);
      assert.equal(entry?.requestId, 'maint-1');
      assert.deepEqual(others, []);
      assert.deepEqual(await adapter.lookup('maint-1'), [entry]);
      // The fault was for one perform: the next is answered, and the server never stopped.
      const next = await adapter.perform('maint-2', MAINTENANCE);
      assert.deepEqual(await ledgerEntries(l.url), [entry, next]);
    });
  }

  it('crash-after-commit: the perform rejects, the server killed itself, and restarted on the same file lookup returns the one committed entry', async () => {
    const l = await ledger({ fault: 'crash-after-commit' });
    const { pid, url } = l;
    const adapter = ledgerAdapter(url);
    const lost = await refusal(adapter.perform('maint-1', MAINTENANCE), 'effect_response_lost');
    assert.equal(lost.requestId, 'maint-1');
    assert.deepEqual(await l.exited, { exitCode: undefined, signal: 'SIGKILL' });
    assert.equal(pidExists(pid), false, 'the process is gone (exited and reaped)');
    // Nobody answers now; a lookup says so instead of answering "no entry".
    const down = await refusal(adapter.lookup('maint-1'), 'ledger_unavailable');
    assert.equal(down.retryable, true);
    const [entry, ...others] = readLedgerFile(l.db);
    assert.equal(entry?.requestId, 'maint-1', 'the commit survived SIGKILL');
    assert.deepEqual(others, []);

    await l.restart();
    assert.notEqual(l.pid, pid);
    assert.equal(l.url, url, 'the restarted server listens on the same port');
    assert.deepEqual(await ledgerAdapter(l.url).lookup('maint-1'), [entry]);
    assert.deepEqual(readLedgerFile(l.db), [entry]);
  });

  it('after a lost response a plain retry under a new request id leaves two entries in the file; a lookup by the original id leaves one', async () => {
    const baseline = await ledger();
    const reconciled = await ledger();
    for (const l of [baseline, reconciled]) {
      await setLedgerFault(l.url, 'commit-then-drop', 1);
      await refusal(ledgerAdapter(l.url).perform('maint-1', MAINTENANCE), 'effect_response_lost');
    }
    // The baseline treats "no response" as "not done" and tries again as a new request.
    const retry = await ledgerAdapter(baseline.url).perform('maint-1-retry', MAINTENANCE);
    const twice = readLedgerFile(baseline.db);
    assert.deepEqual(
      twice.map((entry) => entry.requestId),
      ['maint-1', 'maint-1-retry'],
    );
    assert.equal(twice[0]!.inputDigest, retry.inputDigest, 'the same maintenance, committed twice');
    // Keeping the request id and asking the ledger finds the committed entry and performs nothing.
    const found = await ledgerAdapter(reconciled.url).lookup('maint-1');
    assert.equal(found.length, 1);
    assert.deepEqual(readLedgerFile(reconciled.db), found);
  });

  it('a perform against a stopped server rejects ledger_unavailable: nothing was sent, nothing appended', async () => {
    const l = await ledger();
    assert.deepEqual(await l.stop(), { exitCode: 0, signal: undefined });
    const down = await refusal(ledgerAdapter(l.url).perform('maint-1', MAINTENANCE), 'ledger_unavailable');
    assert.equal(down.requestId, 'maint-1');
    assert.deepEqual(readLedgerFile(l.db), []);
  });

  it('refuses to start on a path that is not a database file: ledger_start_failed with the reason', async () => {
    const dir = join(tempDir('ordivon-ledger-'), 'a-directory');
    mkdirSync(dir);
    const failed = await refusal(startLedger({ db: dir }), 'ledger_start_failed');
    assert.match(failed.message, /cannot open/);
  });

  it('bad request bodies and queries are answered 400 with a code and the field path, and append nothing', async () => {
    const l = await ledger();
    const perform = { requestId: 'maint-1', ...MAINTENANCE };
    const cases: Array<[method: string, path: string, body: string | undefined, field: string]> = [
      ['POST', '/perform', 'not json', '(root)'],
      ['POST', '/perform', JSON.stringify({ ...perform, requestId: undefined }), 'requestId'],
      ['POST', '/perform', JSON.stringify({ ...perform, requestId: '' }), 'requestId'],
      ['POST', '/perform', JSON.stringify({ ...perform, operation: 7 }), 'operation'],
      ['POST', '/perform', JSON.stringify({ ...perform, input: undefined }), 'input'],
      // An unknown key is reported at the key itself (base/zod-issue.ts).
      ['POST', '/perform', JSON.stringify({ ...perform, seq: 1 }), 'seq'],
      ['GET', '/lookup', undefined, 'requestId'],
      ['GET', '/lookup?requestId=a&requestId=b', undefined, 'requestId'],
      ['POST', '/faults', JSON.stringify({ mode: 'explode' }), 'mode'],
      ['POST', '/faults', JSON.stringify({ mode: 'commit-then-drop', times: 0 }), 'times'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await fetch(new URL(path, l.url), { method, ...(body === undefined ? {} : { body }) });
      const answer = (await res.json()) as Record<string, unknown>;
      assert.equal(res.status, 400, `${method} ${path} ${body}`);
      assert.equal(answer['code'], 'ledger_invalid_request');
      assert.equal(answer['path'], field, `${method} ${path} ${body}`);
      assert.equal(typeof answer['message'], 'string');
    }
    const tooLarge = await fetch(new URL('/perform', l.url), { method: 'POST', body: 'x'.repeat(1024 * 1024 + 1) });
    assert.equal(tooLarge.status, 413);
    assert.equal(((await tooLarge.json()) as any).code, 'ledger_body_too_large');
    const unknown = await fetch(new URL('/perform', l.url), { method: 'GET' });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as any).code, 'ledger_route_not_found');

    assert.deepEqual(readLedgerFile(l.db), []);
    const faults = await fetch(new URL('/faults', l.url));
    assert.deepEqual(await faults.json(), { mode: 'none', remaining: null }, 'the refused switches changed nothing');
    const invalid = await refusal(ledgerAdapter(l.url).perform('', MAINTENANCE), 'ledger_invalid_request');
    assert.equal(invalid.path, 'requestId');
    const smuggled = { ...MAINTENANCE, requestId: 'another' } as any;
    await refusal(ledgerAdapter(l.url).perform('maint-1', smuggled), 'ledger_invalid_request');
    assert.deepEqual(readLedgerFile(l.db), []);
  });

  it('documents every ledger code in the error table (docs/errors.md)', () => {
    assert.deepEqual(
      Object.keys(LEDGER_CODES).filter((code) => !DOCUMENTED_CODES.has(code)),
      [],
    );
  });
});
