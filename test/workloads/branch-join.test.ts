import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readBack, type BranchJoinExpectation } from '../../workloads/branch-join/checks.js';
import { tempDir } from '../support/temp.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));

describe('ordivon demo --workload branch-join', { timeout: 600_000 }, () => {
  it('best of three on duration-v1 and a fan-out with a reviewer: exit 0, every expectation held, read back from the state root', async () => {
    const state = join(tempDir('ordivon-branch-join-'), 'state');
    const text = spawnSync(process.execPath, [CLI, 'demo', '--workload', 'branch-join', '--state', state], {
      encoding: 'utf8',
    });
    assert.equal(text.status, 0, text.stderr.slice(-4000));
    for (const line of [
      /^✓ best-of-three: the wrong Attempt ended waiting, its verification refused/m,
      /^✓ best-of-three: the join committed exactly once, the right Attempt the winner by verification/m,
      /^✓ best-of-three: the hang Attempt was cancelled when the right one won/m,
      /^✓ best-of-three: the hang Attempt's late end is retained in the parent after the join, refused superseded$/m,
      /^✓ fan-out: every child's outcome digest is bound in the parent's branch.observe$/m,
      /^✓ fan-out: one reviewer child, of another spec, reviewed the joined change and completed/m,
      /^✓ fan-out: the parent completed/m,
      /^all 18 expectations held$/m,
    ])
      assert.match(text.stdout, line);
    assert.doesNotMatch(text.stdout, /^✗/m);

    // Run again on the same state root, as JSON: Tasks of their own, every expectation held again.
    const again = spawnSync(
      process.execPath,
      [CLI, 'demo', '--workload', 'branch-join', '--only', 'best-of-three', '--state', state, '--json'],
      { encoding: 'utf8' },
    );
    assert.equal(again.status, 0, again.stderr.slice(-4000));
    const report = JSON.parse(again.stdout) as {
      ok: boolean;
      tasks: Record<string, string>;
      expectations: BranchJoinExpectation[];
    };
    assert.equal(report.ok, true);
    assert.deepEqual(Object.keys(report.tasks), ['best-of-three']);
    assert.equal(report.expectations.length, 9);

    // The checks are not vacuous: read against the other part's Task, best of three's expectations fail.
    const fan = /^ {2}fan-out\s+(\S+)$/m.exec(text.stdout)![1]!;
    const crossed = await readBack(state, { 'best-of-three': fan });
    assert.ok(crossed.length > 0 && crossed.every((e) => e.part === 'best-of-three'));
    assert.ok(crossed.filter((e) => !e.held).length >= 5, JSON.stringify(crossed));
  });
});
