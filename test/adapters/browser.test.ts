import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import {
  BROWSER_EFFECT_CODES,
  BrowserEffectError,
  browserEffectAdapter,
  type BrowserEffectAdapter,
  type BrowserEffectCode,
} from '../../adapters/index.js';
import { digestOf } from '../../store/index.js';
import {
  changeWebappItem,
  readWebappFile,
  setWebappFault,
  setWebappIdentity,
  startWebapp,
  webappBrowserConfig,
  type WebappProcess,
} from '../../workloads/world-w1/webapp/index.js';
import { DOCUMENTED_CODES } from '../reliability/documented-codes.js';
import { CHROMIUM } from '../support/chromium.js';
import { rejectsWith } from '../support/rejects-with.js';
import { tempDir } from '../support/temp.js';

// The browser Effect adapter in real headless Chromium against the real World W1 web-app process.
// Every count is read from the web app's own file (readWebappFile), whatever a page showed. One
// browser for the describe (the machine is small), one more for the identity check.

const ORDER = { operation: 'order', target: 'widget' };
const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

const failure = (promise: Promise<unknown>, code: BrowserEffectCode) => rejectsWith(promise, BrowserEffectError, code);

describe('the browser Effect adapter against the World W1 web app', { timeout: 240_000 }, () => {
  let app: WebappProcess;
  let adapter: BrowserEffectAdapter;
  let evidenceDir: string;
  const opened: BrowserEffectAdapter[] = [];

  before(async () => {
    if (CHROMIUM.skip) return;
    const dir = tempDir('ordivon-browser-');
    evidenceDir = join(dir, 'evidence');
    app = await startWebapp({ db: join(dir, 'webapp.db'), identity: 'shop-a' });
    adapter = browserEffectAdapter(
      webappBrowserConfig({ url: app.url, executablePath: CHROMIUM.need(), evidenceDir, timeoutMs: 8_000 }),
    );
    opened.push(adapter);
  });
  after(async () => {
    await Promise.all(opened.map((a) => a.close()));
    await app?.stop();
  });

  const ordersNoted = (note: string) => readWebappFile(app.db).filter((o) => o.note === note);
  const version = async () => (await adapter.observe!(ORDER)).targetVersion!;

  it(
    'observes the identity, the item version and the declared capabilities; a missing item has none',
    { skip: CHROMIUM.skip },
    async () => {
      const seen = await adapter.observe!(ORDER);
      assert.equal(seen.endpointIdentity, 'shop-a');
      assert.equal(seen.targetVersion, (await fetch(`${app.url}/items/widget`)).headers.get('etag')!.slice(1, -1));
      assert.deepEqual(seen.capabilities, { idempotency: 'none', lookup: true, lookupWindowMs: null });
      assert.equal((await adapter.observe!({ operation: 'order', target: 'nothing' })).targetVersion, null);
    },
  );

  it(
    'performs one order, its receipt naming the order, the input digest, and the page and screenshot handed over with it',
    { skip: CHROMIUM.skip },
    async () => {
      const input = { quantity: 3, version: await version() };
      const { receipt, files } = await adapter.perform('task-1/a1/g1/effect', input, ORDER);
      const orders = ordersNoted('task-1/a1/g1/effect');
      assert.equal(orders.length, 1);
      assert.equal(orders[0]!.quantity, 3);
      assert.equal(orders[0]!.inputDigest, digestOf(input));
      assert.equal(receipt.fields['orderNumber'], String(orders[0]!.orderNumber));
      assert.equal(receipt.inputDigest, digestOf(input));
      assert.equal(adapter.receiptInputDigest(receipt), digestOf(input));
      assert.equal(receipt.identity, 'shop-a');
      assert.equal(receipt.status, 200);
      // The files handed over are the ones the receipt names, and the copies in evidenceDir.
      assert.deepEqual(
        files.map((f) => [f.name, f.mediaType, sha256(Buffer.from(f.bytes)), f.bytes.length]),
        [
          ['page.html', 'text/html', receipt.html.digest, receipt.html.bytes],
          ['screenshot.png', 'image/png', receipt.screenshot!.digest, receipt.screenshot!.bytes],
        ],
      );
      const shot = readFileSync(receipt.screenshot!.path!);
      assert.equal(sha256(shot), receipt.screenshot!.digest);
      assert.equal(receipt.screenshot!.path, join(evidenceDir, `${receipt.screenshot!.digest.slice(7)}.png`));
      assert.equal(shot.subarray(1, 4).toString('latin1'), 'PNG');
      const html = readFileSync(receipt.html.path!);
      assert.equal(sha256(html), receipt.html.digest);
      assert.ok(html.toString('utf8').includes(`Order ${orders[0]!.orderNumber} confirmed`));
      // The receipt is JSON (the Host keeps it as an object).
      assert.deepEqual(JSON.parse(JSON.stringify(receipt)), receipt);
    },
  );

  it(
    'commit-then-drop: no answer (not notPerformed), and lookup finds exactly the one order',
    { skip: CHROMIUM.skip },
    async () => {
      const input = { quantity: 1, version: await version() };
      await setWebappFault(app.url, { mode: 'commit-then-drop', times: 1 });
      const error = await failure(adapter.perform('task-2/a1/g1/effect', input, ORDER), 'browser_effect_no_answer');
      assert.equal(adapter.notPerformed(error), false);
      assert.equal(ordersNoted('task-2/a1/g1/effect').length, 1, 'the browser did not resend the dropped submit');
      const found = (await adapter.lookup!('task-2/a1/g1/effect', ORDER))!;
      assert.equal(found.length, 1);
      const { receipt, files } = found[0]!;
      assert.equal(receipt.via, 'lookup');
      assert.equal(receipt.fields['orderNumber'], String(ordersNoted('task-2/a1/g1/effect')[0]!.orderNumber));
      assert.equal(adapter.receiptInputDigest(receipt), digestOf(input));
      // The history page is handed over (no screenshot on a lookup).
      assert.deepEqual(
        files.map((f) => [f.name, f.mediaType, sha256(Buffer.from(f.bytes))]),
        [['page.html', 'text/html', receipt.html.digest]],
      );
      assert.equal(receipt.screenshot, undefined);
      assert.deepEqual(await adapter.lookup!('task-never/a1/g1/effect', ORDER), []);
    },
  );

  it(
    'a confirmation delayed past the timeout is no answer; the order is committed and lookup finds it',
    { skip: CHROMIUM.skip },
    async () => {
      const input = { quantity: 1, version: await version() };
      await setWebappFault(app.url, { mode: 'delay-confirmation', times: 1, delayMs: 600_000 });
      const error = await failure(adapter.perform('task-3/a1/g1/effect', input, ORDER), 'browser_effect_no_answer');
      assert.equal(adapter.notPerformed(error), false);
      assert.equal(ordersNoted('task-3/a1/g1/effect').length, 1);
      assert.equal((await adapter.lookup!('task-3/a1/g1/effect', ORDER))!.length, 1);
    },
  );

  it(
    'an item changed since it was observed: 409 webapp_item_changed, refused, notPerformed, no order',
    { skip: CHROMIUM.skip },
    async () => {
      const observed = await version();
      await changeWebappItem(app.url, 'widget');
      assert.notEqual(await version(), observed);
      const error = await failure(
        adapter.perform('task-4/a1/g1/effect', { quantity: 1, version: observed }, ORDER),
        'browser_effect_refused',
      );
      assert.equal(error.siteCode, 'webapp_item_changed');
      assert.equal(adapter.notPerformed(error), true);
      assert.deepEqual(ordersNoted('task-4/a1/g1/effect'), []);
    },
  );

  it(
    'a form page that refuses (unknown item) and input without a mapped field are notPerformed, nothing ordered',
    { skip: CHROMIUM.skip },
    async () => {
      const before = readWebappFile(app.db).length;
      const missing = await failure(
        adapter.perform(
          'task-5/a1/g1/effect',
          { quantity: 1, version: await version() },
          { operation: 'order', target: 'nothing' },
        ),
        'browser_effect_refused',
      );
      assert.equal(missing.siteCode, 'webapp_item_not_found');
      assert.equal(adapter.notPerformed(missing), true);
      const input = await failure(
        adapter.perform('task-5/a1/g2/effect', { quantity: 1 }, ORDER),
        'browser_effect_invalid_input',
      );
      assert.equal(input.path, 'version');
      assert.equal(adapter.notPerformed(input), true);
      assert.equal(readWebappFile(app.db).length, before);
    },
  );

  it(
    'the web app down: connection refused before submit is unreachable, notPerformed; after a restart it performs again',
    { skip: CHROMIUM.skip },
    async () => {
      const input = { quantity: 1, version: await version() };
      const before = readWebappFile(app.db).length;
      await app.stop();
      const error = await failure(adapter.perform('task-6/a1/g1/effect', input, ORDER), 'browser_effect_unreachable');
      assert.equal(adapter.notPerformed(error), true);
      assert.equal(readWebappFile(app.db).length, before);
      await app.restart({ identity: 'shop-a' });
      await adapter.perform('task-6/a1/g2/effect', input, ORDER);
      assert.equal(readWebappFile(app.db).length, before + 1);
      assert.equal(ordersNoted('task-6/a1/g2/effect').length, 1);
    },
  );

  it(
    'observe sees a changed identity; an adapter expecting the old one refuses to submit',
    { skip: CHROMIUM.skip },
    async () => {
      const input = { quantity: 1, version: await version() };
      await setWebappIdentity(app.url, 'shop-b');
      assert.equal((await adapter.observe!(ORDER)).endpointIdentity, 'shop-b');
      const expecting = browserEffectAdapter(
        webappBrowserConfig({ url: app.url, executablePath: CHROMIUM.need(), evidenceDir, expectedIdentity: 'shop-a' }),
      );
      opened.push(expecting);
      const error = await failure(
        expecting.perform('task-7/a1/g1/effect', input, ORDER),
        'browser_effect_identity_changed',
      );
      assert.equal(expecting.notPerformed(error), true);
      assert.deepEqual(ordersNoted('task-7/a1/g1/effect'), []);
      await setWebappIdentity(app.url, 'shop-a');
      await expecting.perform('task-7/a1/g2/effect', input, ORDER);
      assert.equal(ordersNoted('task-7/a1/g2/effect').length, 1);
    },
  );

  it('refuses a config that does not parse, naming the field, before any browser starts', () => {
    const config = webappBrowserConfig({
      url: 'http://127.0.0.1:1',
      executablePath: '/bin/false',
      evidenceDir: '/tmp/x',
    });
    const error = (() => {
      try {
        browserEffectAdapter({ ...config, timeoutMs: -1 });
      } catch (e) {
        return e;
      }
    })();
    assert.ok(error instanceof BrowserEffectError);
    assert.equal(error.code, 'browser_effect_invalid_config');
    assert.equal(error.path, 'timeoutMs');
  });

  it('a Chromium that does not start is launch_failed, notPerformed', async () => {
    const broken = browserEffectAdapter(
      webappBrowserConfig({ url: 'http://127.0.0.1:1', executablePath: '/bin/false', evidenceDir: tempDir() }),
    );
    const error = await failure(
      broken.perform('r', { quantity: 1, version: 'v' }, ORDER),
      'browser_effect_launch_failed',
    );
    assert.equal(broken.notPerformed(error), true);
  });

  it('documents every browser adapter code in the error table (docs/errors.md)', () => {
    assert.deepEqual(
      Object.keys(BROWSER_EFFECT_CODES).filter((code) => !DOCUMENTED_CODES.has(code)),
      [],
    );
  });
});
