import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../support/temp.js';
import { runCrashLoop } from './crash-loop.js';

describe('crash loop (SIGKILL at random acknowledgement counts)', () => {
  it(
    'loses no acknowledged event over 12 kills; every boot succeeds and projections equal replay',
    { timeout: 120_000 },
    async () => {
      const root = join(tempDir('ordivon-crash-'), 'state');
      const summary = await runCrashLoop({ root, rounds: 12, seed: 20261130, tasks: 20, maxLines: 300 });
      assert.deepEqual(summary.problems, []);
      assert.equal(summary.kills, 12);
      assert.equal(summary.lost, 0);
      assert.ok(summary.acknowledged >= 12, `only ${summary.acknowledged} acknowledgements`);
      assert.ok(summary.events >= summary.acknowledged);
    },
  );
});
