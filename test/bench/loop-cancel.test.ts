import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runLoopCancelBench } from '../../bench/loop-cancel.bench.js';
import { headline } from '../../bench/report/headline.js';
import { LOOP_CANCEL, LOOP_CANCEL_BOUND_MS } from '../../bench/report/loop-cancel-headline.js';
import { SCENARIOS, scenarioNeeds } from '../../bench/suite.js';

describe('bench: the loop-cancel scenario', () => {
  it('is a scenario of the suite that needs the README example', () => {
    assert.ok((SCENARIOS as readonly string[]).includes('loop-cancel'));
    assert.deepEqual(scenarioNeeds('loop-cancel'), ['../../examples/quickstart/task.json']);
  });

  it('times each cancel of a held model call, and the headline judges it against the 1 s bound', async () => {
    const rows = await runLoopCancelBench({ quick: true, rounds: 2, log: () => {} });
    assert.deepEqual(
      rows.map((r) => [r.scenario, r.name, r.iterations]),
      [['loop-cancel', LOOP_CANCEL, 2]],
    );
    const [row] = rows;
    // Figures, not thresholds: what they are is for `npm run bench` to report.
    for (const key of ['p95Ms', 'medianVsBound', 'maxVsBound', 'jobEndedMedianMs'])
      assert.equal(typeof row!.detail?.[key], 'number', key);
    assert.equal(row!.detail?.boundMs, LOOP_CANCEL_BOUND_MS);
    const h = headline(rows).find((x) => x.key === 'loop_cancel_max_vs_bound');
    assert.ok(h);
    assert.equal(h.goal, `≤ 1× (${LOOP_CANCEL_BOUND_MS} ms)`);
    assert.equal(typeof h.met, 'boolean', 'judged');
  });

  it('the headline holds the slowest cancel against the bound: met just inside it, not just outside', () => {
    const met = (maxMs: number) =>
      headline([{ scenario: 'loop-cancel', name: LOOP_CANCEL, medianMs: 5, minMs: 1, maxMs, iterations: 15 }]).find(
        (h) => h.key === 'loop_cancel_max_vs_bound',
      )?.met;
    assert.equal(met(LOOP_CANCEL_BOUND_MS * 0.99), true);
    assert.equal(met(LOOP_CANCEL_BOUND_MS * 1.01), false);
  });
});
