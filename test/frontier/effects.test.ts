import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { EffectAdapter } from '../../frontier/effect-actions.js';
import { openHost, type Host } from '../../host/host.js';
import { OBJECT_KINDS, type EffectIntentObject } from '../../objects/index.js';
import { digestOf } from '../../store/index.js';
import {
  ledgerAdapter,
  ledgerEffectAdapter,
  readLedgerFile,
  setLedgerFault,
  startLedger,
  type LedgerProcess,
  type StartLedgerOptions,
} from '../../workloads/round1-v1/ledger/index.js';
import { EFFECT_HARNESSES, MAINTENANCE, effectSpec, receiptsOf, type EffectCandidate } from '../support/effect-task.js';
import { tempDir } from '../support/temp.js';

// The Effect path end to end: a real Host on a real store, a real command agent choosing the
// candidate, and the real ledger server process behind the adapter. Every entry count is read from
// the ledger's own file; ordering comes from awaited commits and answers, never from sleeps.

const started: LedgerProcess[] = [];
const hosts: Host[] = [];
after(async () => {
  await Promise.all(hosts.map((h) => h.stop()));
  await Promise.all(started.map((l) => l.stop()));
});

async function ledger(options: Omit<StartLedgerOptions, 'db'> = {}): Promise<LedgerProcess> {
  const server = await startLedger({ db: join(tempDir('ordivon-ledger-'), 'ledger.db'), ...options });
  started.push(server);
  return server;
}

async function host(state: string, adapter: EffectAdapter): Promise<Host> {
  const h = await openHost({ state, harnesses: EFFECT_HARNESSES, effectAdapters: { ledger: adapter } });
  hosts.push(h);
  return h;
}

/** Creates the Task (with `taskId`, if given) and assigns its decision stage to the agent choosing `choice`. */
async function decide(h: Host, choice: EffectCandidate, taskId?: string): Promise<string> {
  const created = taskId ?? (await h.supervisor.createTask(effectSpec())).taskId;
  if (taskId !== undefined) await h.supervisor.createTask(effectSpec(taskId));
  const sent = await h.supervisor.send(created, {
    type: 'assignment.commit',
    harness: `pick-${choice}`,
    stage: 'choose',
  });
  assert.equal(sent.admitted, true, JSON.stringify(sent));
  return created;
}

/** The Task's events as `[type, code]`, code `ok` for admitted ones. */
function journal(h: Host, taskId: string, from = 'effect.intend'): string[][] {
  const events = h.supervisor.events(taskId);
  const start = events.findIndex((e) => e.type === from);
  return events
    .slice(start)
    .map((e) => [e.type, e.disposition.admitted ? 'ok' : (e.disposition as { code: string }).code]);
}

/** An adapter over the ledger whose `perform` never reaches it: the request is lost on the way. */
function losingAdapter(url: string): EffectAdapter & { performs: number } {
  const inner = ledgerEffectAdapter(url);
  const adapter = {
    ...inner,
    performs: 0,
    perform: async () => {
      adapter.performs++;
      throw new Error('socket hang up (the request never left this process)');
    },
  };
  return adapter;
}

describe('Effects through the Round 1 ledger (real Host, real store, real ledger process)', () => {
  it('performed: the intent is durable first, the receipt is recorded, and the ledger file holds one entry', async () => {
    const l = await ledger();
    const h = await host(tempDir(), ledgerEffectAdapter(l.url));
    const taskId = await decide(h, 'maintain');
    assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    const requestId = `${taskId}/a1/g1/effect`;
    assert.deepEqual(journal(h, taskId), [
      ['effect.intend', 'ok'],
      ['effect.record', 'ok'],
      ['evaluation.settle', 'ok'],
    ]);
    const { effect } = h.supervisor.getTask(taskId)!.context;
    assert.equal(effect?.status, 'recorded');
    const intent = h.supervisor.getObject<EffectIntentObject>(effect.intentDigest).body;
    assert.deepEqual(
      [intent.requestId, intent.endpoint, intent.operation, intent.target, intent.inputDigest],
      [requestId, l.url, MAINTENANCE.operation, MAINTENANCE.target, digestOf(MAINTENANCE.input)],
    );
    const entries = readLedgerFile(l.db);
    assert.deepEqual(
      entries.map((e) => [e.requestId, e.operation, e.target, e.inputDigest]),
      [[requestId, intent.operation, intent.target, intent.inputDigest]],
    );
    assert.deepEqual(
      receiptsOf(h, taskId).map((r) => [r.via, r.receipt]),
      [['perform', entries[0]]],
    );
  });

  it('commit-then-drop: the Effect is unknown, the Host looks it up by its request id and records the one entry', async () => {
    const l = await ledger({ fault: 'commit-then-drop', faultTimes: 1 });
    const h = await host(tempDir(), ledgerEffectAdapter(l.url));
    const taskId = await decide(h, 'maintain');
    assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    assert.deepEqual(journal(h, taskId), [
      ['effect.intend', 'ok'],
      ['effect.lost', 'ok'],
      ['effect.reconcile', 'ok'],
      ['evaluation.settle', 'ok'],
    ]);
    assert.equal(h.supervisor.getTask(taskId)!.context.effect?.status, 'recorded');
    const entries = readLedgerFile(l.db);
    assert.deepEqual(
      entries.map((e) => e.requestId),
      [`${taskId}/a1/g1/effect`],
    );
    assert.deepEqual(
      receiptsOf(h, taskId).map((r) => [r.via, r.receipt]),
      [['lookup', entries[0]]],
    );
  });

  it('lookup finds nothing: never performed again; an operator is asked, and asked anew after answering reconcile', async () => {
    const l = await ledger();
    const adapter = losingAdapter(l.url);
    const h = await host(tempDir(), adapter);
    const taskId = await decide(h, 'maintain');
    const requestId = `${taskId}/a1/g1/effect`;
    assert.equal(await h.supervisor.waitFor(taskId, ['effect_unknown.held']), 'effect_unknown.held');
    const first = `${requestId}/operator`;
    const { requests } = h.supervisor.getTask(taskId)!.context;
    assert.deepEqual(Object.keys(requests), [first]);
    assert.deepEqual([requests[first]!.about, requests[first]!.status], ['effect', 'pending']);
    const body = OBJECT_KINDS['decision-request'].parse(h.supervisor.getObject(requests[first]!.digest).body);
    assert.deepEqual(body.allowed, ['reconcile', 'abandon']);
    assert.equal(body.reversibility, 'unknown');

    // The operator asks for another lookup: still nothing, so a second request (a request id is consumed once).
    const again = await h.supervisor.send(taskId, { type: 'request.answer', requestId: first, answer: 'reconcile' });
    assert.equal(again.admitted, true, JSON.stringify(again));
    const second = `${requestId}/operator-2`;
    await h.supervisor.waitFor(taskId, ['effect_unknown.held']);
    assert.equal(h.supervisor.getTask(taskId)!.context.requests[second]?.status, 'pending');
    const abandoned = await h.supervisor.send(taskId, { type: 'request.answer', requestId: second, answer: 'abandon' });
    assert.equal(abandoned.state, 'waiting');
    assert.equal(h.supervisor.getTask(taskId)!.context.effect?.status, 'abandoned');

    assert.deepEqual(
      journal(h, taskId).map(([type]) => type),
      [
        'effect.intend',
        'effect.lost',
        'effect.reconcile',
        'request.open',
        'request.answer',
        'effect.reconcile',
        'request.open',
        'request.answer',
      ],
    );
    assert.equal(adapter.performs, 1, 'performed once, never again');
    assert.deepEqual(readLedgerFile(l.db), []);
  });

  it('two entries under the request id: the Task is blocked identity_conflict and nothing more is performed', async () => {
    const l = await ledger();
    const taskId = `effect-conflict-${randomUUID()}`;
    const requestId = `${taskId}/a1/g1/effect`;
    // Someone else wrote under the id the Host will use (seeded straight into the ledger).
    const seed = ledgerAdapter(l.url);
    await seed.perform(requestId, MAINTENANCE);
    await seed.perform(requestId, MAINTENANCE);
    // The Host's own perform commits a third and loses the answer, so the Host looks the id up.
    await setLedgerFault(l.url, 'commit-then-drop', 1);
    const h = await host(tempDir(), ledgerEffectAdapter(l.url));
    await decide(h, 'maintain', taskId);
    assert.equal(await h.supervisor.waitFor(taskId, ['blocked'], []), 'blocked');
    const { lastRejection, effect } = h.supervisor.getTask(taskId)!.context;
    assert.deepEqual(
      [lastRejection?.event, lastRejection?.reason, lastRejection?.detail],
      ['effect.reconcile', 'identity_conflict', `3 receipts under ${requestId}`],
    );
    assert.equal(effect?.status, 'unknown');
    assert.equal(readLedgerFile(l.db).length, 3, "two seeded, one the Host's lost perform; no fourth");
  });

  for (const refusal of [
    { name: 'the ledger is down (no connection)', choice: 'maintain', code: 'ledger_unavailable', down: true },
    {
      name: 'the input does not fit the ledger (not sent)',
      choice: 'oversized',
      code: 'ledger_invalid_request',
      down: false,
    },
  ] as const) {
    it(`adapter refusal, ${refusal.name}: effect_failed ${refusal.code}, the Task waits, nothing in the ledger`, async () => {
      const l = await ledger();
      if (refusal.down) await l.stop();
      const h = await host(tempDir(), ledgerEffectAdapter(l.url));
      const taskId = await decide(h, refusal.choice);
      assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
      assert.deepEqual(journal(h, taskId), [
        ['effect.intend', 'ok'],
        ['effect.fail', 'effect_failed'],
      ]);
      const { lastRejection, effect } = h.supervisor.getTask(taskId)!.context;
      assert.equal(effect?.status, 'failed');
      assert.match(lastRejection?.detail ?? '', new RegExp(`^${refusal.code}: `));
      assert.deepEqual(readLedgerFile(l.db), []);
    });
  }

  it('the Host stops between the intent and the answer: a fresh Host finds the Effect unknown (confirm_effect) and reconciles it by lookup', async () => {
    const l = await ledger();
    const state = tempDir();
    const inner = ledgerEffectAdapter(l.url);
    let committed!: () => void;
    const reached = new Promise<void>((resolve) => (committed = resolve));
    // The first Host's perform reaches the ledger, which commits; its answer never comes back to the Host.
    const stalled: EffectAdapter = {
      ...inner,
      perform: async (...args) => {
        await inner.perform(...args);
        committed();
        return new Promise<never>(() => undefined);
      },
    };
    const first = await openHost({ state, harnesses: EFFECT_HARNESSES, effectAdapters: { ledger: stalled } });
    const taskId = await decide(first, 'maintain');
    await reached;
    assert.equal(first.supervisor.getTask(taskId)!.state, 'effecting');
    await first.stop();

    const second = await host(state, inner);
    assert.equal(await second.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    const lost = second.supervisor.events(taskId).find((e) => e.type === 'effect.lost');
    assert.match(String(lost?.data['reason']), /before the Host stopped/);
    assert.deepEqual(journal(second, taskId), [
      ['effect.intend', 'ok'],
      ['effect.lost', 'ok'],
      ['effect.reconcile', 'ok'],
      ['evaluation.settle', 'ok'],
    ]);
    assert.equal(second.supervisor.getTask(taskId)!.context.effect?.status, 'recorded');
    assert.deepEqual(
      readLedgerFile(l.db).map((e) => e.requestId),
      [`${taskId}/a1/g1/effect`],
    );
  });

  it('reconcile by decision: while the Effect is unknown, performing again or classifying it failed is refused effect_unknown; a reconcile records the one entry', async () => {
    const l = await ledger({ fault: 'commit-then-drop', faultTimes: 1 });
    const h = await host(tempDir(), ledgerEffectAdapter(l.url));
    const taskId = await decide(h, 'maintain-later');
    assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    assert.equal(h.supervisor.getTask(taskId)!.context.effect?.status, 'unknown');
    for (const choice of ['classify-failed', 'maintain', 'reconcile'] as const) {
      await h.supervisor.send(taskId, { type: 'assignment.commit', harness: `pick-${choice}`, stage: 'choose' });
      await h.supervisor.waitFor(taskId, ['waiting']);
    }
    const decisions = h.supervisor
      .events(taskId)
      .filter((e) => e.type === 'decision.submit')
      .map((e) => [e.data['candidateId'], e.disposition.admitted ? 'ok' : (e.disposition as { code: string }).code]);
    assert.deepEqual(decisions, [
      ['maintain-later', 'ok'],
      ['classify-failed', 'effect_unknown'],
      ['maintain', 'effect_unknown'],
      ['reconcile', 'ok'],
    ]);
    const { effect } = h.supervisor.getTask(taskId)!.context;
    assert.deepEqual([effect?.status, effect?.requestId], ['recorded', `${taskId}/a1/g1/effect`]);
    assert.equal(h.supervisor.events(taskId).filter((e) => e.type === 'effect.intend').length, 1);
    assert.equal(readLedgerFile(l.db).length, 1);
  });
});
