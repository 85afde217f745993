import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { withEvidence, type EffectAdapter } from '../../frontier/effect-adapter.js';
import { openHost, type Host } from '../../host/host.js';
import { HostError } from '../../kernel/errors.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { OBJECT_KINDS, type EffectReceiptObject } from '../../objects/index.js';
import { rebuildAll } from '../../recovery/rebuild.js';
import { EventStore, digestOf } from '../../store/index.js';
import { EFFECT_HARNESSES, effectSpec } from '../support/effect-task.js';
import { ordivonSync } from '../support/cli-sync.js';
import { serveInProcess } from '../support/decision-requests.js';
import { flipByte, tamper } from '../support/tamper.js';
import { tempDir } from '../support/temp.js';

// Evidence files an adapter hands over with a receipt (`withEvidence`): kept by the Host as blobs
// in the receipt's commit, named in the `effect-receipt` object, and checked at boot as any object
// an event references. A real Host on a real LMDB store; the adapter is an in-process system that
// keeps what it performed (the system the Effect goes to, not the thing under test).

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const PAGE = Buffer.from('<html><body><h1>Entry 1 recorded</h1></body></html>', 'utf8');
const SHOT = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const HISTORY = Buffer.from('<html><body><li>entry 1</li></body></html>', 'utf8');

const hosts: Host[] = [];
after(async () => {
  await Promise.all(hosts.map((h) => h.stop()));
});

/**
 * A system keeping one entry per perform. `answer` says how `perform` answers: with the receipt
 * and its files, the receipt alone, files that do not parse, or no answer after doing it.
 */
function system(answer: 'evidence' | 'plain' | 'bad-files' | 'lost') {
  const entries: Array<{ requestId: string; inputDigest: string }> = [];
  const adapter: EffectAdapter = {
    endpoint: 'memory://system',
    async perform(requestId, input) {
      const entry = { requestId, inputDigest: digestOf(input) };
      entries.push(entry);
      if (answer === 'lost') throw new Error('the answer was lost');
      if (answer === 'plain') return entry;
      if (answer === 'bad-files')
        return withEvidence(entry, [
          { name: 'page.html', mediaType: 'text/html', bytes: PAGE },
          { name: 'page.html', mediaType: 'text/html', bytes: SHOT },
        ]);
      return withEvidence(entry, [
        { name: 'page.html', mediaType: 'text/html', bytes: PAGE },
        { name: 'screenshot.png', mediaType: 'image/png', bytes: SHOT },
      ]);
    },
    async lookup(requestId) {
      return entries
        .filter((e) => e.requestId === requestId)
        .map((e) => withEvidence(e, [{ name: 'page.html', mediaType: 'text/html', bytes: HISTORY }]));
    },
  };
  return { adapter, entries };
}

/** Runs one Task choosing the Effect to rest (`waiting`); returns the Host's state root, the Task and its receipt digests. */
async function run(adapter: EffectAdapter, during?: (h: Host, taskId: string) => Promise<void>) {
  const state = tempDir();
  const h = await openHost({ state, harnesses: EFFECT_HARNESSES, effectAdapters: { ledger: adapter } });
  hosts.push(h);
  const { taskId } = await h.supervisor.createTask(effectSpec());
  const sent = await h.supervisor.send(taskId, {
    type: 'assignment.commit',
    harness: 'pick-maintain',
    stage: 'choose',
  });
  assert.equal(sent.admitted, true, JSON.stringify(sent));
  assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
  const events = h.supervisor.events(taskId);
  const types = events.slice(events.findIndex((e) => e.type === 'effect.intend')).map((e) => e.type);
  const digests = events.flatMap((e) =>
    e.type === 'effect.record'
      ? [e.data['receiptDigest'] as string]
      : e.type === 'effect.reconcile'
        ? (e.data['receiptDigests'] as string[])
        : [],
  );
  const receipts = digests.map((d) => OBJECT_KINDS['effect-receipt'].parse(h.supervisor.getObject(d).body));
  await during?.(h, taskId);
  await h.stop();
  hosts.splice(hosts.indexOf(h), 1);
  return { state, taskId, types, digests, receipts };
}

/** Each evidence file's blob as the stopped store holds it: its sha256, or null when absent. */
async function storedBlobs(state: string, receipts: EffectReceiptObject[]): Promise<Array<[string, string | null]>> {
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  try {
    return receipts.flatMap((r) =>
      (r.evidence ?? []).map((f): [string, string | null] => {
        const bytes = store.rawBlob(f.digest);
        return [f.digest, bytes === undefined ? null : sha256(bytes)];
      }),
    );
  } finally {
    await store.close();
  }
}

describe('Effect evidence files kept by the Host (real Host, real LMDB)', () => {
  it('perform: the receipt names each file, and the store holds blobs that hash to those digests', async () => {
    const { state, types, receipts } = await run(system('evidence').adapter);
    assert.deepEqual(types, ['effect.intend', 'effect.record', 'evaluation.settle']);
    assert.equal(receipts.length, 1);
    assert.deepEqual(receipts[0]!.evidence, [
      { name: 'page.html', mediaType: 'text/html', digest: sha256(PAGE), bytes: PAGE.length },
      { name: 'screenshot.png', mediaType: 'image/png', digest: sha256(SHOT), bytes: SHOT.length },
    ]);
    assert.deepEqual(await storedBlobs(state, receipts), [
      [sha256(PAGE), sha256(PAGE)],
      [sha256(SHOT), sha256(SHOT)],
    ]);
    // The receipt's files count as references: a healthy store rebuilds without findings.
    const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
    try {
      assert.deepEqual(rebuildAll(store).findings, []);
    } finally {
      await store.close();
    }
  });

  it('ordivon show lists each Effect receipt with its evidence files, names and digests (text and --json)', async () => {
    const { state, taskId, digests } = await run(system('evidence').adapter);
    const json = ordivonSync(['--state', state, '--json', 'show', taskId]);
    assert.equal(json.status, 0, json.stderr);
    const requestId = `${taskId}/a1/g1/effect`;
    assert.deepEqual(
      json
        .json()
        .effects.map((e: Record<string, unknown>) => [
          (e.revision as number) > 0,
          e.event,
          e.requestId,
          e.receiptDigest,
          e.via,
          e.evidence,
        ]),
      [
        [
          true,
          'effect.record',
          requestId,
          digests[0],
          'perform',
          [
            { name: 'page.html', mediaType: 'text/html', digest: sha256(PAGE), bytes: PAGE.length },
            { name: 'screenshot.png', mediaType: 'image/png', digest: sha256(SHOT), bytes: SHOT.length },
          ],
        ],
      ],
    );
    const text = ordivonSync(['--state', state, 'show', taskId]);
    assert.equal(text.status, 0, text.stderr);
    assert.match(
      text.stdout,
      new RegExp(`^  effect r\\d+ effect\\.record ${requestId} via perform: receipt sha256:`, 'm'),
    );
    assert.ok(
      text.stdout.includes(`    evidence page.html (text/html, ${PAGE.length} bytes) ${sha256(PAGE)}\n`),
      text.stdout,
    );
    assert.ok(text.stdout.includes(`    evidence screenshot.png (image/png, ${SHOT.length} bytes) ${sha256(SHOT)}`));
  });

  it('ordivon evidence writes each file as the bytes the Host keeps, with a manifest; a non-empty DIR is export_exists', async () => {
    const { state, taskId, digests } = await run(system('evidence').adapter);
    const to = join(tempDir(), 'out');
    const r = ordivonSync(['--state', state, '--json', 'evidence', taskId, '--to', to]);
    assert.equal(r.status, 0, r.stderr);
    const manifest = JSON.parse(readFileSync(join(to, 'manifest.json'), 'utf8')) as {
      taskId: string;
      files: Array<{ path: string; name: string; digest: string; receiptDigest: string; requestId: string }>;
    };
    assert.deepEqual(r.json(), { ...manifest, to });
    assert.deepEqual(
      manifest.files.map((f) => [f.name, f.digest, f.receiptDigest, f.requestId]),
      [
        ['page.html', sha256(PAGE), digests[0], `${taskId}/a1/g1/effect`],
        ['screenshot.png', sha256(SHOT), digests[0], `${taskId}/a1/g1/effect`],
      ],
    );
    for (const f of manifest.files) {
      assert.match(f.path, /^r\d+-1\/(page\.html|screenshot\.png)$/);
      assert.equal(sha256(readFileSync(join(to, f.path))), f.digest);
    }
    const again = ordivonSync(['--state', state, '--json', 'evidence', taskId, '--to', to]);
    assert.equal(again.status, 1);
    assert.equal(again.error().code, 'export_exists');

    // A Task without evidence: the manifest alone.
    const plain = await run(system('plain').adapter);
    const none = join(tempDir(), 'none');
    assert.equal(ordivonSync(['--state', plain.state, 'evidence', plain.taskId, '--to', none]).status, 0);
    assert.deepEqual(JSON.parse(readFileSync(join(none, 'manifest.json'), 'utf8')), {
      taskId: plain.taskId,
      files: [],
    });
  });

  it("the control API's GET /tasks/:id lists the same effects with their evidence files", async () => {
    let effects: unknown;
    const { digests } = await run(system('evidence').adapter, async (h, taskId) => {
      const service = await serveInProcess(h.supervisor);
      try {
        const res = await fetch(`${service.url}/tasks/${encodeURIComponent(taskId)}`, {
          headers: { authorization: `Bearer ${service.token}` },
        });
        assert.equal(res.status, 200);
        effects = ((await res.json()) as { effects: unknown }).effects;
      } finally {
        await service.close();
      }
    });
    assert.deepEqual(
      (effects as Array<{ receiptDigest: string; evidence: unknown }>).map((e) => [e.receiptDigest, e.evidence]),
      [
        [
          digests[0],
          [
            { name: 'page.html', mediaType: 'text/html', digest: sha256(PAGE), bytes: PAGE.length },
            { name: 'screenshot.png', mediaType: 'image/png', digest: sha256(SHOT), bytes: SHOT.length },
          ],
        ],
      ],
    );
  });

  it('lookup: a receipt found after a lost answer keeps the files handed over with it', async () => {
    const { entries, adapter } = system('lost');
    const { state, types, receipts } = await run(adapter);
    assert.deepEqual(types, ['effect.intend', 'effect.lost', 'effect.reconcile', 'evaluation.settle']);
    assert.equal(entries.length, 1, 'performed once, looked up after');
    assert.deepEqual(
      receipts.map((r) => [r.via, r.evidence]),
      [['lookup', [{ name: 'page.html', mediaType: 'text/html', digest: sha256(HISTORY), bytes: HISTORY.length }]]],
    );
    assert.deepEqual(await storedBlobs(state, receipts), [[sha256(HISTORY), sha256(HISTORY)]]);
  });

  it('an adapter without evidence: the receipt object is the one it was before (no evidence key, same digest)', async () => {
    const { entries, adapter } = system('plain');
    const { taskId, digests, receipts } = await run(adapter);
    assert.deepEqual(Object.keys(receipts[0]!).sort(), ['receipt', 'requestId', 'taskId', 'via']);
    const before = { taskId, requestId: `${taskId}/a1/g1/effect`, via: 'perform', receipt: entries[0] };
    assert.deepEqual(digests, [digestOf({ kind: 'effect-receipt', body: before })]);
  });

  it('evidence files that do not parse (a name twice): the Effect is unknown, nothing of the answer is kept', async () => {
    const { state, types, receipts } = await run(system('bad-files').adapter);
    // Unknown, then looked up: the lookup's receipt (with its own file) is what is recorded.
    assert.deepEqual(types, ['effect.intend', 'effect.lost', 'effect.reconcile', 'evaluation.settle']);
    assert.deepEqual(
      receipts.map((r) => r.via),
      ['lookup'],
    );
    const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
    try {
      assert.equal(store.rawBlob(sha256(SHOT)), undefined, 'the refused answer wrote no blob');
    } finally {
      await store.close();
    }
  });

  for (const [damage, code] of [
    ['deleted', 'object_missing'],
    ['corrupt', 'object_corrupt'],
  ] as const)
    it(`boot refuses a store whose evidence blob is ${damage} (${code}), naming the Task and the blob`, async () => {
      const { state, taskId, receipts } = await run(system('evidence').adapter);
      const shot = receipts[0]!.evidence!.find((f) => f.name === 'screenshot.png')!.digest;
      await tamper(state, (env) => {
        if (damage === 'deleted') env.openDB('blobs', { encoding: 'binary' }).removeSync(shot as never);
        else flipByte(env, 'blobs', shot);
      });
      const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
      try {
        const { findings } = rebuildAll(store);
        assert.deepEqual(
          findings.map((f) => [f.code, f.taskId, f.object]),
          [[code, taskId, shot]],
        );
      } finally {
        await store.close();
      }
      const sup = createSupervisor({ state });
      await assert.rejects(sup.start(), (e) => e instanceof HostError && e.code === code && e.message.includes(shot));
    });
});
