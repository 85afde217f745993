import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import { browserEffectAdapter, BrowserReceipt, type BrowserEffectAdapter } from '../../adapters/index.js';
import { openHost, type Host } from '../../host/index.js';
import { OBJECT_KINDS, type EffectReceiptObject, type TaskSpecInput } from '../../objects/index.js';
import { EventStore, digestOf } from '../../store/index.js';
import {
  changeWebappItem,
  readWebappFile,
  setWebappFault,
  startWebapp,
  webappBrowserConfig,
  type WebappProcess,
} from '../../workloads/world-w1/webapp/index.js';
import { agent, choiceSpec } from '../support/decision-task.js';
import { receiptsOf } from '../support/effect-task.js';
import { CHROMIUM } from '../support/chromium.js';
import { tempDir } from '../support/temp.js';

// The Effect path with the browser adapter: a real Host on a real store, a command agent choosing
// the candidate, real headless Chromium submitting the real web app's form. Orders are counted from
// the web app's own file.

const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** A Task whose one decision stage orders `input` of the widget through the adapter `shop`. */
function orderSpec(input: Record<string, unknown>): TaskSpecInput {
  return choiceSpec({
    title: 'Order widgets',
    goal: 'Order the widgets exactly once.',
    candidates: [
      {
        id: 'order',
        summary: 'order (effect)',
        action: { kind: 'effect', adapter: 'shop', operation: 'order', target: 'widget', input, reconcile: 'host' },
      },
    ],
  });
}

describe('Effects through the browser adapter (real Host, real Chromium, real web app)', { timeout: 240_000 }, () => {
  let app: WebappProcess;
  let adapter: BrowserEffectAdapter;
  let evidenceDir: string;
  const hosts: Host[] = [];

  before(async () => {
    if (CHROMIUM.skip) return;
    const dir = tempDir('ordivon-browser-host-');
    evidenceDir = join(dir, 'evidence');
    app = await startWebapp({ db: join(dir, 'webapp.db') });
    // No evidenceDir, so no copies outside the Host: the evidence files are the Host's alone.
    adapter = browserEffectAdapter(
      webappBrowserConfig({ url: app.url, executablePath: CHROMIUM.need(), timeoutMs: 8_000 }),
    );
  });
  after(async () => {
    await Promise.all(hosts.map((h) => h.stop()));
    await adapter?.close();
    await app?.stop();
  });

  /** Runs one Task choosing `order` with the item's current version to rest, and returns it with its receipts. */
  async function run(version?: string) {
    const input = {
      quantity: 2,
      version: version ?? (await adapter.observe!({ operation: 'order', target: 'widget' })).targetVersion,
    };
    const state = tempDir();
    const h = await openHost({
      state,
      harnesses: { 'pick-order': agent('choose', 'order') },
      effectAdapters: { shop: adapter },
    });
    hosts.push(h);
    const { taskId } = await h.supervisor.createTask(orderSpec(input));
    const sent = await h.supervisor.send(taskId, { type: 'assignment.commit', harness: 'pick-order', stage: 'choose' });
    assert.equal(sent.admitted, true, JSON.stringify(sent));
    assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    const events = h.supervisor.events(taskId);
    const types = events.slice(events.findIndex((e) => e.type === 'effect.intend')).map((e) => e.type);
    const receipts = receiptsOf(h, taskId);
    return { h, state, taskId, requestId: `${taskId}/a1/g1/effect`, input, types, receipts, events };
  }

  /** Each evidence file of the receipts as `[name, mediaType, digest, sha256 of the stored blob]` (the Host stopped). */
  async function storedEvidence(h: Host, state: string, receipts: EffectReceiptObject[]) {
    await h.stop();
    hosts.splice(hosts.indexOf(h), 1);
    const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
    try {
      return receipts.flatMap((r) =>
        (r.evidence ?? []).map((f) => {
          const bytes = store.rawBlob(f.digest);
          assert.equal(bytes?.length, f.bytes, f.name);
          return [f.name, f.mediaType, f.digest, bytes ? sha256(Buffer.from(bytes)) : null];
        }),
      );
    } finally {
      await store.close();
    }
  }

  it(
    'performed: one order, the receipt recorded with its page and screenshot as blobs in the Host store',
    { skip: CHROMIUM.skip },
    async () => {
      const { h, state, taskId, requestId, input, types, receipts } = await run();
      assert.deepEqual(types, ['effect.intend', 'effect.record', 'evaluation.settle']);
      assert.equal(h.supervisor.getTask(taskId)!.context.effect?.status, 'recorded');
      const orders = readWebappFile(app.db).filter((o) => o.note === requestId);
      assert.equal(orders.length, 1);
      assert.equal(orders[0]!.inputDigest, digestOf(input));
      assert.equal(receipts.length, 1);
      assert.equal(receipts[0]!.via, 'perform');
      const receipt = BrowserReceipt.parse(receipts[0]!.receipt);
      assert.equal(receipt.fields['orderNumber'], String(orders[0]!.orderNumber));
      assert.deepEqual(await storedEvidence(h, state, receipts), [
        ['page.html', 'text/html', receipt.html.digest, receipt.html.digest],
        ['screenshot.png', 'image/png', receipt.screenshot!.digest, receipt.screenshot!.digest],
      ]);
      assert.equal(receipt.screenshot!.path, undefined);
      assert.equal(existsSync(evidenceDir), false, 'no copy outside the Host without evidenceDir');
    },
  );

  it(
    'commit-then-drop: the Effect is unknown, the Host looks it up in the history page and records the one order',
    { skip: CHROMIUM.skip },
    async () => {
      await setWebappFault(app.url, { mode: 'commit-then-drop', times: 1 });
      const { h, state, taskId, requestId, input, types, receipts } = await run();
      assert.deepEqual(types, ['effect.intend', 'effect.lost', 'effect.reconcile', 'evaluation.settle']);
      assert.equal(h.supervisor.getTask(taskId)!.context.effect?.status, 'recorded');
      const orders = readWebappFile(app.db).filter((o) => o.note === requestId);
      assert.equal(orders.length, 1, 'one order: neither the browser nor the Host sent the submit again');
      assert.deepEqual(
        receipts.map((r) => r.via),
        ['lookup'],
      );
      assert.equal(adapter.receiptInputDigest(receipts[0]!.receipt), digestOf(input));
      // The history page the order was found on is kept as well.
      const html = BrowserReceipt.parse(receipts[0]!.receipt).html.digest;
      assert.deepEqual(await storedEvidence(h, state, receipts), [['page.html', 'text/html', html, html]]);
    },
  );

  it(
    'an item changed since it was observed: the site refuses (409), the Effect fails browser_effect_refused, no order',
    { skip: CHROMIUM.skip },
    async () => {
      const observed = (await adapter.observe!({ operation: 'order', target: 'widget' })).targetVersion!;
      await changeWebappItem(app.url, 'widget');
      const { h, taskId, requestId, types, receipts, events } = await run(observed);
      assert.deepEqual(types, ['effect.intend', 'effect.fail']);
      assert.equal(events.at(-1)!.data['code'], 'browser_effect_refused');
      assert.equal(h.supervisor.getTask(taskId)!.context.effect?.status, 'failed');
      assert.deepEqual(receipts, []);
      assert.deepEqual(
        readWebappFile(app.db).filter((o) => o.note === requestId),
        [],
      );
    },
  );
});
