import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postgresPart } from '../support/postgres.js';
import { runClusterTorture } from './cluster-torture.js';

const part = postgresPart();

describe('cluster torture (three Host processes on one PostgreSQL database)', { skip: part.skip }, () => {
  it(
    'loses no acknowledged event, gives no Task two outcomes and accepts no write from a lapsed lease over 8 rounds of SIGKILL, SIGSTOP past the lease, a blackholed connection and every connection reset; no Host exits on its own, and every Task ends up held and served by a live Host',
    { timeout: 240_000 },
    async (t) => {
      part.need();
      const summary = await runClusterTorture({ rounds: 8, seed: 20261203, tasks: 4, maxLines: 60 });
      t.diagnostic(JSON.stringify({ ...summary, problems: summary.problems.length }));
      assert.deepEqual(summary.problems, []);
      assert.equal(summary.lost, 0);
      assert.equal(summary.doubleOutcomes, 0);
      assert.equal(summary.fencedAccepted, 0);
      assert.equal(summary.unowned, 0);
      assert.equal(summary.unexpectedExits, 0);
      // Each fault happened, and each moved Tasks: the zeros above are not those of a quiet run.
      assert.deepEqual([summary.kills, summary.pauses, summary.blackholes, summary.resets], [2, 2, 2, 2]);
      assert.ok(summary.takeovers > 0, 'no Task was taken over');
      assert.ok(summary.refusedAfterResume > 0, 'no resumed or healed Host was refused lease_lost');
      assert.ok(summary.acknowledged > 0 && summary.events >= summary.acknowledged);
    },
  );
});
