import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import {
  WEBAPP_CODES,
  changeWebappItem,
  readWebappFile,
  setWebappFault,
  setWebappIdentity,
  startWebapp,
  webappOrders,
  type StartWebappOptions,
  type WebappProcess,
} from '../../../workloads/world-w1/webapp/index.js';
import { DOCUMENTED_CODES } from '../../reliability/documented-codes.js';
import { stoppedAfter } from '../../support/stopped-after.js';
import { tempDir } from '../../support/temp.js';
import { until } from '../../support/until.js';

// The World W1 web app as a real server process on a real SQLite file, over plain HTTP (the
// browser's side is test/adapters/browser.test.ts). Every count is read from the file itself.

const SERVER = fileURLToPath(new URL('../../../workloads/world-w1/webapp/server.js', import.meta.url));
const ZERO = `sha256:${'0'.repeat(64)}`;

const webapp = stoppedAfter((options: Omit<StartWebappOptions, 'db'> = {}): Promise<WebappProcess> =>
  startWebapp({ db: join(tempDir('ordivon-webapp-'), 'webapp.db'), ...options }),
);

const meta = (html: string, name: string) => new RegExp(`<meta name="${name}" content="([^"]*)">`).exec(html)?.[1];

async function itemPage(app: WebappProcess, name = 'widget') {
  const res = await fetch(`${app.url}/items/${name}`);
  return { status: res.status, headers: res.headers, html: await res.text() };
}

async function versionOf(app: WebappProcess, name = 'widget'): Promise<string> {
  return meta((await itemPage(app, name)).html, 'item-version')!;
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

async function submit(app: WebappProcess, body: string, type = 'application/x-www-form-urlencoded') {
  const res = await fetch(`${app.url}/orders`, { method: 'POST', headers: { 'content-type': type }, body });
  return { status: res.status, html: await res.text() };
}

const order = (version: string, note: string, quantity = '2') =>
  form({ item: 'widget', quantity, note, version, inputDigest: ZERO });

describe('the World W1 web app', () => {
  it('serves an item page whose ETag, meta tag and hidden field carry one version, and states its identity', async () => {
    const app = await webapp({ identity: 'shop-a' });
    const page = await itemPage(app);
    assert.equal(page.status, 200);
    const version = meta(page.html, 'item-version')!;
    assert.match(version, /^sha256:[0-9a-f]{64}$/);
    assert.equal(page.headers.get('etag'), `"${version}"`);
    assert.ok(page.html.includes(`<input type="hidden" name="version" value="${version}">`));
    assert.equal(page.headers.get('site-identity'), 'shop-a');
    assert.equal(meta(page.html, 'site-identity'), 'shop-a');
    for (const field of ['quantity', 'note', 'inputDigest', 'item']) assert.ok(page.html.includes(`name="${field}"`));
  });

  it('appends an order for every submit, the same form twice included, each confirmed with its note and digest', async () => {
    const app = await webapp();
    const version = await versionOf(app);
    const first = await submit(app, order(version, 'req-1'));
    const second = await submit(app, order(version, 'req-1'));
    assert.equal(first.status, 200);
    assert.ok(first.html.includes('<h1>Order 1 confirmed</h1>'), first.html);
    assert.ok(second.html.includes('<h1>Order 2 confirmed</h1>'), second.html);
    assert.ok(first.html.includes('<dd class="note">req-1</dd>'));
    assert.ok(first.html.includes(`<dd class="input-digest">${ZERO}</dd>`));
    const orders = readWebappFile(app.db);
    assert.deepEqual(
      orders.map((o) => [o.orderNumber, o.note, o.quantity, o.itemVersion, o.inputDigest]),
      [
        [1, 'req-1', 2, version, ZERO],
        [2, 'req-1', 2, version, ZERO],
      ],
    );
    assert.deepEqual(await webappOrders(app.url), orders);
  });

  it('refuses a submit whose version the item left with a 409 webapp_item_changed page, and appends nothing', async () => {
    const app = await webapp();
    const observed = await versionOf(app);
    const changed = await changeWebappItem(app.url, 'widget');
    assert.notEqual(changed.version, observed);
    assert.equal(await versionOf(app), changed.version);
    const refused = await submit(app, order(observed, 'req-stale'));
    assert.equal(refused.status, 409);
    assert.equal(meta(refused.html, 'error-code'), 'webapp_item_changed');
    assert.equal(meta(refused.html, 'error-path'), 'version');
    assert.deepEqual(readWebappFile(app.db), []);
  });

  it('refuses a form that does not parse with 400 webapp_invalid_request naming the field, and appends nothing', async () => {
    const app = await webapp();
    const version = await versionOf(app);
    const cases: Array<[string, string, string | undefined]> = [
      [order(version, 'r', '0'), 'quantity', undefined],
      [order(version, 'r') + '&quantity=3', 'quantity', undefined],
      [order(version, 'r') + '&extra=1', 'extra', undefined],
      [form({ item: 'widget', quantity: '1', note: 'r', version }), 'inputDigest', undefined],
      [order(version, 'r'), '(root)', 'application/json'],
    ];
    for (const [body, path, type] of cases) {
      const refused = await submit(app, body, type);
      assert.equal(refused.status, 400, body);
      assert.equal(meta(refused.html, 'error-code'), 'webapp_invalid_request', body);
      assert.equal(meta(refused.html, 'error-path'), path, body);
    }
    assert.equal((await submit(app, order(version, 'x'.repeat(70_000)))).status, 413);
    assert.deepEqual(readWebappFile(app.db), []);
  });

  it('answers 404 webapp_item_not_found for an unknown item and webapp_route_not_found for an unknown route', async () => {
    const app = await webapp();
    const missing = await itemPage(app, 'nothing');
    assert.equal(missing.status, 404);
    assert.equal(meta(missing.html, 'error-code'), 'webapp_item_not_found');
    assert.equal(meta(missing.html, 'site-identity'), 'webapp-1');
    const route = await fetch(`${app.url}/control/nothing`);
    assert.equal(route.status, 404);
    assert.equal(((await route.json()) as { code: string }).code, 'webapp_route_not_found');
  });

  it('lists the orders whose note is exactly the one asked for on the history page', async () => {
    const app = await webapp();
    const version = await versionOf(app);
    for (const note of ['t/a1/g1/effect', 't/a1/g10/effect', 't/a1/g1/effect']) await submit(app, order(version, note));
    const history = await (await fetch(`${app.url}/orders?note=${encodeURIComponent('t/a1/g1/effect')}`)).text();
    assert.equal([...history.matchAll(/<li class="order">/g)].length, 2);
    assert.ok(
      history.includes('<dd class="order-number">1</dd>') && history.includes('<dd class="order-number">3</dd>'),
    );
    const none = await (await fetch(`${app.url}/orders?note=other`)).text();
    assert.ok(none.includes('<p id="count" data-value="0">'));
    assert.equal((await fetch(`${app.url}/orders?note=a&note=b`)).status, 400);
  });

  it('commit-then-drop commits the order durably and destroys the socket without an answer', async () => {
    const app = await webapp();
    const version = await versionOf(app);
    assert.deepEqual(await setWebappFault(app.url, { mode: 'commit-then-drop', times: 1 }), {
      mode: 'commit-then-drop',
      remaining: 1,
      delayMs: 60_000,
    });
    await assert.rejects(submit(app, order(version, 'req-drop')));
    assert.deepEqual(
      readWebappFile(app.db).map((o) => o.note),
      ['req-drop'],
    );
    // One turn, then the switch is off.
    assert.equal((await submit(app, order(version, 'req-next'))).status, 200);
    assert.equal(readWebappFile(app.db).length, 2);
  });

  it('delay-confirmation commits the order and holds its confirmation back', async () => {
    const app = await webapp({ fault: 'delay-confirmation', delayMs: 600_000 });
    const version = await versionOf(app);
    let answered = false;
    const body = order(version, 'req-late');
    const req = request(`${app.url}/orders`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
    });
    req.on('response', () => (answered = true));
    req.on('error', () => undefined);
    req.end(body);
    const committed = await until('the delayed order is committed', 10_000, async () => {
      const orders = readWebappFile(app.db);
      return orders.length > 0 ? orders : undefined;
    });
    assert.deepEqual(
      committed.map((o) => o.note),
      ['req-late'],
    );
    assert.equal(answered, false, 'the confirmation is held back ten minutes');
    req.destroy();
  });

  it('keeps its orders across a restart on the same file and port, with the identity the restart gives', async () => {
    const app = await webapp({ identity: 'shop-a' });
    const version = await versionOf(app);
    await submit(app, order(version, 'before'));
    const url = app.url;
    const pid = app.pid;
    await app.restart({ identity: 'shop-b' });
    assert.equal(app.url, url);
    assert.notEqual(app.pid, pid);
    assert.equal((await itemPage(app)).headers.get('site-identity'), 'shop-b');
    assert.equal(await versionOf(app), version, 'the item is as it was');
    assert.ok((await submit(app, order(version, 'after'))).html.includes('Order 2 confirmed'));
    assert.deepEqual(
      readWebappFile(app.db).map((o) => o.note),
      ['before', 'after'],
    );
    // The control route changes the identity of the running process.
    assert.equal(await setWebappIdentity(app.url, 'shop-c'), 'shop-c');
    assert.equal(meta((await itemPage(app)).html, 'site-identity'), 'shop-c');
  });

  it('a switch without times stays on until set to none; a restart starts with none; the control routes read back', async () => {
    const app = await webapp({ fault: 'commit-then-drop' });
    const version = await versionOf(app);
    assert.deepEqual(await (await fetch(`${app.url}/control/faults`)).json(), {
      mode: 'commit-then-drop',
      remaining: null,
      delayMs: 60_000,
    });
    await assert.rejects(submit(app, order(version, 'a')));
    await assert.rejects(submit(app, order(version, 'b')));
    // A refused submit takes no turn of the switch: it committed nothing.
    assert.equal((await submit(app, order(`sha256:${'1'.repeat(64)}`, 'c'))).status, 409);
    await setWebappFault(app.url, { mode: 'none' });
    assert.equal((await submit(app, order(version, 'd'))).status, 200);
    await setWebappFault(app.url, { mode: 'commit-then-drop' });
    await app.restart();
    assert.equal(((await (await fetch(`${app.url}/control/faults`)).json()) as { mode: string }).mode, 'none');
    assert.deepEqual(await (await fetch(`${app.url}/control/identity`)).json(), { identity: 'webapp-1' });
    assert.deepEqual(
      readWebappFile(app.db).map((o) => o.note),
      ['a', 'b', 'd'],
    );
  });

  it('refuses a bad item name, an empty note filter and a bad control body with 400; an unknown item change is 404', async () => {
    const app = await webapp();
    assert.equal((await itemPage(app, 'Not_An_Item')).status, 400);
    assert.equal((await fetch(`${app.url}/orders?note=`)).status, 400);
    const bad = await fetch(`${app.url}/control/faults`, { method: 'POST', body: '{"mode":"explode"}' });
    assert.equal(bad.status, 400);
    assert.deepEqual(
      { ...((await bad.json()) as object), message: undefined },
      { code: 'webapp_invalid_request', path: 'mode', message: undefined },
    );
    const change = await fetch(`${app.url}/control/items/nothing/change`, { method: 'POST' });
    assert.equal(change.status, 404);
    assert.equal(((await change.json()) as { code: string }).code, 'webapp_item_not_found');
  });

  it('exits 2 webapp_usage on a bad command line and 1 webapp_start_failed on a file it cannot open', async () => {
    const dir = tempDir('ordivon-webapp-');
    const usage = await execa(process.execPath, [SERVER, '--db', join(dir, 'w.db'), '--port', 'x', '--identity', 'a'], {
      reject: false,
    });
    assert.equal(usage.exitCode, 2);
    assert.equal((JSON.parse(usage.stderr) as { code: string }).code, 'webapp_usage');
    const missingIdentity = await execa(process.execPath, [SERVER, '--db', join(dir, 'w.db'), '--port', '0'], {
      reject: false,
    });
    assert.equal(missingIdentity.exitCode, 2);
    const unopenable = await execa(
      process.execPath,
      [SERVER, '--db', join(dir, 'no', 'such', 'w.db'), '--port', '0', '--identity', 'a'],
      { reject: false },
    );
    assert.equal(unopenable.exitCode, 1);
    assert.equal((JSON.parse(unopenable.stderr) as { code: string }).code, 'webapp_start_failed');
  });

  it('documents every web-app code in the error table (docs/errors.md)', () => {
    assert.deepEqual(
      Object.keys(WEBAPP_CODES).filter((code) => !DOCUMENTED_CODES.has(code)),
      [],
    );
  });
});
