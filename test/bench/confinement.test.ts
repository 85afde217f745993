import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runConfinementBench, percentile } from '../../bench/confinement.bench.js';
import {
  CONFINED_START_BUDGET_MS,
  CONFINEMENT_START,
  confinementStage,
} from '../../bench/report/confinement-headline.js';
import { headline } from '../../bench/report/headline.js';
import { SCENARIOS, scenarioNeeds } from '../../bench/suite.js';
import { probeSandbox } from '../../os/index.js';

describe('bench: the confinement scenario', () => {
  it('is a scenario of the suite that needs the README example', () => {
    assert.ok((SCENARIOS as readonly string[]).includes('confinement'));
    assert.deepEqual(scenarioNeeds('confinement'), ['../../examples/quickstart/agent.mjs']);
  });

  it('--quick times confined and unconfined starts and quickstart stages, and the headline judges the 50 ms goal', async () => {
    const { rows, note } = await runConfinementBench({ quick: true, log: () => {} });
    const probe = probeSandbox();
    if (!probe.ok) {
      // Where no sandbox can be had the scenario says so and times nothing.
      assert.deepEqual(rows, []);
      assert.match(note ?? '', /^confinement skipped: /);
      return;
    }
    assert.equal(note, undefined);
    assert.deepEqual(
      rows.map((r) => r.name),
      [
        CONFINEMENT_START.unconfined,
        CONFINEMENT_START.none,
        CONFINEMENT_START.host,
        confinementStage('investigate', 'none'),
        confinementStage('investigate', 'bwrap'),
        confinementStage('fix', 'none'),
        confinementStage('fix', 'bwrap'),
      ],
    );
    for (const row of rows) {
      assert.equal(row.scenario, 'confinement');
      assert.ok(row.medianMs > 0 && row.iterations > 0, row.name);
    }
    for (const row of rows.slice(0, 3)) assert.equal(typeof row.detail?.p95Ms, 'number', row.name);
    assert.equal(typeof rows[4]!.detail?.vsNone, 'number');
    for (const row of rows.slice(3)) assert.equal(typeof row.detail?.agentRunMedianMs, 'number', row.name);

    const heads = headline(rows);
    for (const key of ['confinement_start_none_above', 'confinement_start_host_above']) {
      const h = heads.find((x) => x.key === key);
      assert.ok(h, key);
      assert.equal(h.goal, `≤ ${CONFINED_START_BUDGET_MS} ms above`);
      assert.equal(typeof h.met, 'boolean', `${key} is judged`);
    }
    for (const key of ['confinement_stage_investigate', 'confinement_stage_fix']) {
      const h = heads.find((x) => x.key === key);
      assert.ok(h, key);
      assert.equal(h.met, undefined, `${key} is reported, not judged`);
    }
  });

  it('percentiles are nearest-rank', () => {
    const samples = Array.from({ length: 20 }, (_, i) => 20 - i);
    assert.equal(percentile(samples, 95), 19);
    assert.equal(percentile(samples, 50), 10);
    assert.equal(percentile([7], 95), 7);
  });
});
