import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import type { EffectAdapter } from '../../frontier/effect-adapter.js';
import { openHost, type Host } from '../../host/host.js';
import { OBJECT_KINDS, ReadSetContext, type EffectIntentObject } from '../../objects/index.js';
import { ABSENT } from '../../kernel/index.js';
import { digestOf, sha256Text } from '../../store/index.js';
import {
  observedAdapter,
  startObservedProvider,
  type ObservedProvider,
  type ProviderFault,
} from '../support/observed-provider.js';
import { OBSERVED_HARNESSES, OBSERVED_INPUT, observedSpec, type ObservedCandidate } from '../support/observed-task.js';
import { tempDir } from '../support/temp.js';

// Observations of an Effect's endpoint and target, end to end: a real Host on a real LMDB store,
// a real command agent choosing the candidate, and a real HTTP provider on loopback that counts
// what it performs. The provider's fault switches change the world after a given number of
// target reads, so each change lands between two of the Host's observations without timing:
// the compile reads the target once per candidate (2), a decision's admission once (3rd), the
// re-check before the intent once (4th).

const providers: ObservedProvider[] = [];
const hosts: Host[] = [];
after(async () => {
  await Promise.all(hosts.map((h) => h.stop()));
  await Promise.all(providers.map((p) => p.stop()));
});

async function provider(): Promise<ObservedProvider> {
  const p = await startObservedProvider();
  providers.push(p);
  return p;
}

async function host(p: ObservedProvider, adapter: EffectAdapter = observedAdapter(p.url)): Promise<Host> {
  const h = await openHost({
    state: tempDir(),
    harnesses: OBSERVED_HARNESSES,
    effectAdapters: { provider: adapter, 'provider-plain': observedAdapter(p.url, { lookup: 'none' }) },
  });
  hosts.push(h);
  return h;
}

async function decide(h: Host, choice: ObservedCandidate, taskId?: string): Promise<string> {
  const created = (await h.supervisor.createTask(observedSpec(taskId))).taskId;
  const sent = await h.supervisor.send(created, {
    type: 'assignment.commit',
    harness: `pick-${choice}`,
    stage: 'choose',
  });
  assert.equal(sent.admitted, true, JSON.stringify(sent));
  return created;
}

/** The Task's events from the first decision on, as `[type, code]` (`ok`: admitted). */
function journal(h: Host, taskId: string): string[][] {
  const events = h.supervisor.events(taskId);
  return events
    .slice(events.findIndex((e) => e.type === 'decision.submit'))
    .filter((e) => e.type.startsWith('effect.') || e.type === 'decision.submit' || e.type === 'request.open')
    .map((e) => [e.type, e.disposition.admitted ? 'ok' : (e.disposition as { code: string }).code]);
}

function contextOf(h: Host, digest: string): ReadSetContext {
  return ReadSetContext.parse(h.supervisor.getObject(digest).body);
}

describe('Effect observations (real Host, real store, a real HTTP provider on loopback)', () => {
  it('binds the endpoint identity, target version and capabilities of each effect candidate in the Context, and records them in the intent', async () => {
    const p = await provider();
    const h = await host(p);
    const taskId = await decide(h, 'charge');
    assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    const { context } = h.supervisor.getTask(taskId)!;
    const items = contextOf(h, context.contextDigest!).items.filter((i) => i.observed);
    const capabilities = JSON.stringify({ idempotency: 'key', lookup: true, lookupWindowMs: 60_000 });
    assert.deepEqual(
      items.map((i) => [i.sourceId, i.trust, i.digest, i.observed?.value]),
      [
        ['effect:charge/endpoint', 'trusted', sha256Text('provider-key-1'), 'provider-key-1'],
        ['effect:charge/target', 'trusted', ABSENT, null],
        ['effect:charge/capabilities', 'trusted', sha256Text(capabilities), capabilities],
        ['effect:charge-plain/endpoint', 'trusted', sha256Text('provider-key-1'), 'provider-key-1'],
        ['effect:charge-plain/target', 'trusted', ABSENT, null],
        [
          'effect:charge-plain/capabilities',
          'trusted',
          sha256Text(JSON.stringify({ idempotency: 'none', lookup: false, lookupWindowMs: null })),
          JSON.stringify({ idempotency: 'none', lookup: false, lookupWindowMs: null }),
        ],
      ],
    );
    assert.equal(context.effect?.status, 'recorded');
    const intent = h.supervisor.getObject<EffectIntentObject>(context.effect.intentDigest).body;
    assert.deepEqual([intent.endpointIdentity, intent.targetVersion], ['provider-key-1', null]);
    assert.deepEqual(
      p.performs.map((r) => [r.key, r.inputDigest]),
      [[`${taskId}/a1/g1/effect`, digestOf(OBSERVED_INPUT)]],
    );
  });

  it('a target moved between compile and the decision: the decision is context_stale naming the observation, the stage reruns, one perform under generation 2', async () => {
    const p = await provider();
    const h = await host(p);
    p.fault({ afterReads: 2, change: 'target' });
    const taskId = await decide(h, 'charge');
    await h.supervisor.waitFor(taskId, ['waiting']);
    const stale = h.supervisor.events(taskId).find((e) => e.type === 'decision.submit')!;
    assert.equal((stale.disposition as { code?: string }).code, 'context_stale');
    assert.deepEqual(
      (stale.data['stale'] as Array<{ sourceId: string; bound: string }>).map((s) => [s.sourceId, s.bound]),
      [['effect:charge/target', ABSENT]],
    );
    assert.deepEqual(
      p.performs.map((r) => r.key),
      [`${taskId}/a1/g2/effect`],
    );
    assert.equal(h.supervisor.getTask(taskId)!.context.effect?.status, 'recorded');
  });

  it('an observation that cannot be made when the decision is admitted: context_stale with current null, the stage reruns, one perform under generation 2', async () => {
    const p = await provider();
    const h = await host(p);
    p.fault({ afterReads: 2, change: 'unavailable' });
    const taskId = await decide(h, 'charge');
    await h.supervisor.waitFor(taskId, ['waiting']);
    const stale = h.supervisor.events(taskId).find((e) => e.type === 'decision.submit')!;
    assert.equal((stale.disposition as { code?: string }).code, 'context_stale');
    assert.deepEqual(
      (stale.data['stale'] as Array<{ sourceId: string; current: string | null }>).map((s) => [s.sourceId, s.current]),
      [['effect:charge/target', null]],
    );
    assert.deepEqual(
      p.performs.map((r) => r.key),
      [`${taskId}/a1/g2/effect`],
    );
  });

  it('a target moved between the decision and perform: effect.refuse context_stale before any intent, 0 performs under generation 1, the stage reruns', async () => {
    const p = await provider();
    const h = await host(p);
    p.fault({ afterReads: 3, change: 'target' });
    const taskId = await decide(h, 'charge');
    await h.supervisor.waitFor(taskId, ['waiting']);
    assert.deepEqual(journal(h, taskId), [
      ['decision.submit', 'ok'],
      ['effect.refuse', 'context_stale'],
      ['decision.submit', 'ok'],
      ['effect.intend', 'ok'],
      ['effect.record', 'ok'],
    ]);
    const intents = h.supervisor.events(taskId).filter((e) => e.type === 'effect.intend');
    assert.deepEqual(
      intents.map((e) => e.data['requestId']),
      [`${taskId}/a1/g2/effect`],
    );
    assert.deepEqual(
      p.performs.map((r) => r.key),
      [`${taskId}/a1/g2/effect`],
    );
  });

  it('the endpoint identity changed between compile and the decision: the decision is admitted (only the target is re-read there), the re-check before the intent refuses effect_endpoint_changed, no rerun binds the new endpoint', async () => {
    const p = await provider();
    const h = await host(p);
    p.fault({ afterReads: 2, change: 'identity' });
    const taskId = await decide(h, 'charge');
    assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    assert.deepEqual(journal(h, taskId), [
      ['decision.submit', 'ok'],
      ['effect.refuse', 'effect_endpoint_changed'],
    ]);
    assert.deepEqual(p.performs, []);
  });

  for (const change of ['identity', 'capabilities'] as const) {
    it(`the endpoint's ${change} changed before perform: refused effect_endpoint_changed, nothing intended or performed, the Task waits`, async () => {
      const p = await provider();
      const h = await host(p);
      p.fault({ afterReads: 3, change } satisfies ProviderFault);
      const taskId = await decide(h, 'charge');
      assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
      assert.deepEqual(journal(h, taskId), [
        ['decision.submit', 'ok'],
        ['effect.refuse', 'effect_endpoint_changed'],
      ]);
      const { context } = h.supervisor.getTask(taskId)!;
      assert.equal(context.lastRejection?.reason, 'effect_endpoint_changed');
      assert.match(
        context.lastRejection?.detail ?? '',
        change === 'identity' ? /endpoint bound provider-key-1, now provider-key-2/ : /capabilities bound/,
      );
      assert.equal(context.effect, null);
      assert.deepEqual(p.performs, []);
    });
  }

  for (const via of ['perform', 'lookup'] as const) {
    it(`a receipt (via ${via}) for other input than the intent's: blocked identity_conflict, never recorded as the Effect, nothing performed again`, async () => {
      const p = await provider();
      const h = await host(p);
      const taskId = `observed-conflict-${randomUUID()}`;
      // Another client used the key the Host will use, with other input; the provider replays its receipt.
      p.seed(`${taskId}/a1/g1/effect`, 'accounts/42', digestOf({ amount: 500, currency: 'EUR' }));
      if (via === 'lookup') p.dropNextAnswer();
      await decide(h, 'charge', taskId);
      assert.equal(await h.supervisor.waitFor(taskId, ['blocked'], []), 'blocked');
      const expected =
        via === 'perform'
          ? [
              ['effect.intend', 'ok'],
              ['effect.conflict', 'identity_conflict'],
            ]
          : [
              ['effect.intend', 'ok'],
              ['effect.lost', 'ok'],
              ['effect.conflict', 'identity_conflict'],
            ];
      assert.deepEqual(journal(h, taskId), [['decision.submit', 'ok'], ...expected]);
      const { context } = h.supervisor.getTask(taskId)!;
      assert.notEqual(context.effect?.status, 'recorded');
      assert.equal(context.effect?.receiptDigest, null);
      assert.equal(context.lastRejection?.reason, 'identity_conflict');
      assert.equal(p.performs.length, 1, 'only the other client performed');
    });
  }

  for (const variant of ['no-lookup', 'declined'] as const) {
    it(`a lost answer from a provider that cannot be asked (${variant}): an operator DecisionRequest saying so, performed once, never twice`, async () => {
      const p = await provider();
      const h = await host(p, observedAdapter(p.url, { lookup: 'declines' }));
      p.dropNextAnswer();
      const taskId = await decide(h, variant === 'no-lookup' ? 'charge-plain' : 'charge');
      assert.equal(await h.supervisor.waitFor(taskId, ['effect_unknown.held']), 'effect_unknown.held');
      const requestId = `${taskId}/a1/g1/effect`;
      const reconcile = h.supervisor.events(taskId).find((e) => e.type === 'effect.reconcile')!;
      assert.deepEqual([reconcile.data['receiptDigests'], reconcile.data['unanswerable']], [[], variant]);
      const held = h.supervisor.getTask(taskId)!.context.requests[`${requestId}/operator`]!;
      const request = OBJECT_KINDS['decision-request'].parse(h.supervisor.getObject(held.digest).body);
      assert.match(request.evidence.join('\n'), /cannot be asked what happened under/);
      assert.doesNotMatch(request.evidence.join('\n'), /no receipt under/);
      // The operator asks again: the provider still cannot be asked, so a second request, and no perform.
      const again = await h.supervisor.send(taskId, {
        type: 'request.answer',
        requestId: `${requestId}/operator`,
        answer: 'reconcile',
      });
      assert.equal(again.admitted, true, JSON.stringify(again));
      await h.supervisor.waitFor(taskId, ['effect_unknown.held']);
      assert.equal(h.supervisor.getTask(taskId)!.context.requests[`${requestId}/operator-2`]?.status, 'pending');
      assert.equal(p.performs.length, 1, 'performed once, never again');
    });
  }
});
