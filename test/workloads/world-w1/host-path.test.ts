import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hostExpectation, W1_TRAJECTORIES } from '../../../workloads/world-w1/index.js';
import { runHostPath } from '../../../workloads/world-w1/host-path/sequence.js';
import { providerSurface } from '../../../workloads/world-w1/host-path/provider-surface.js';
import { readProviderRecords, startProvider } from '../../../workloads/world-w1/provider/index.js';
import { stoppedAfter } from '../../support/stopped-after.js';
import { tempDir } from '../../support/temp.js';

// The Host path of World W1 on every trajectory: a real Host on a real store, a command agent
// choosing the Effect, the real provider process behind the HTTP adapter, a Host process SIGKILLed
// between intent and answer. Every perform is counted from the provider's records file.

const startTracked = stoppedAfter(startProvider);

describe('World W1: the Host path on every (operation, fault)', () => {
  it('performs each Effect at most once, records it through the lookup where one can answer, asks an operator where none can, and refuses a changed endpoint', async () => {
    const dir = tempDir('ordivon-w1-host-');
    const provider = await startTracked({ dir: join(dir, 'provider'), identity: 'w1-provider-key' });
    const outcomes = await runHostPath(join(dir, 'host'), providerSurface(provider), W1_TRAJECTORIES, () => undefined);
    const records = readProviderRecords(provider.dir);
    const seen = outcomes.map((o) => {
      const trajectory = W1_TRAJECTORIES.find((t) => t.name === o.trajectory)!;
      const performs = records.filter((r) => r.reference === `w1-${o.trajectory}`).length;
      const outcome =
        o.effect === 'recorded'
          ? 'succeeded'
          : o.state === 'effect_unknown.held'
            ? 'asked'
            : o.intents === 0 && o.refusals.includes('effect_endpoint_changed')
              ? 'refused'
              : `${o.state}/${o.effect}`;
      return { trajectory: trajectory.name, outcome, performs, intents: o.intents, stale: o.staleRecords };
    });
    const expected = W1_TRAJECTORIES.map((t) => {
      const { outcome, performs } = hostExpectation(t);
      return { trajectory: t.name, outcome, performs, intents: performs === 0 ? 0 : 1, stale: 0 };
    });
    const differing = seen.filter((s, i) => JSON.stringify(s) !== JSON.stringify(expected[i]));
    assert.deepEqual(
      differing,
      [],
      JSON.stringify({
        differing,
        outcomes: outcomes.filter((o) => differing.some((d) => d.trajectory === o.trajectory)),
      }),
    );
    assert.deepEqual(seen, expected);
    const byName = new Map(outcomes.map((o) => [o.trajectory, o]));
    // A moved target made the decision (or the re-check before the intent) stale; the rerun performed once.
    for (const operation of ['orders', 'transfers', 'messages'])
      assert.ok(byName.get(`${operation}-target-changed`)!.refusals.includes('context_stale'), operation);
    // Where no lookup can answer, one operator request each, about the Effect.
    for (const name of ['messages-commit-then-drop', 'transfers-commit-then-drop', 'orders-lookup-expired'])
      assert.equal(byName.get(name)!.operatorRequests, 1, name);
  });
});
