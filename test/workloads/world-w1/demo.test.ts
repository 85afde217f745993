import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../support/temp.js';

const CLI = fileURLToPath(new URL('../../../scripts/ordivon.js', import.meta.url));

function demo(state: string, ...args: string[]) {
  return spawnSync(process.execPath, [CLI, 'demo', '--workload', 'world-w1', '--state', state, ...args], {
    encoding: 'utf8',
  });
}

// `ordivon demo --workload world-w1` as a user runs it: a real process, real provider processes.
describe('ordivon demo --workload world-w1', () => {
  it('runs the chosen trajectories under all four variants, prints the results with --json, writes them in the state root, exits 0', () => {
    const state = join(tempDir('ordivon-w1-demo-'), 'state');
    const r = demo(state, '--only', 'orders-commit-then-drop,messages-commit-then-drop', '--json', '--fresh');
    assert.equal(r.status, 0, r.stderr.slice(-3000));
    const report = JSON.parse(r.stdout) as {
      rows: Array<{ variant: string; operation: string; outcome: string; performs: number }>;
      failed: string[];
      results: string;
    };
    assert.deepEqual(report.failed, []);
    assert.deepEqual(
      report.rows.map((row) => `${row.variant} ${row.operation} ${row.outcome} ${row.performs}`),
      [
        'a-retry orders succeeded 2',
        'a-retry messages succeeded 2',
        'b-key orders succeeded 1',
        'b-key messages succeeded 2',
        'c-lookup orders succeeded 1',
        'c-lookup messages succeeded 2',
        'd-host orders succeeded 1',
        'd-host messages asked 1',
      ],
    );
    assert.equal(report.results, join(state, 'world-w1-results.json'));
    assert.ok(existsSync(report.results));
    assert.deepEqual(JSON.parse(readFileSync(report.results, 'utf8')).rows, report.rows);
  });

  it('refuses an unknown trajectory name as a usage error naming it, and writes nothing', () => {
    const state = join(tempDir('ordivon-w1-demo-'), 'state');
    const r = demo(state, '--only', 'orders-none,orders-meteor', '--json');
    assert.equal(r.status, 2);
    const error = JSON.parse(r.stderr.trim().split('\n')[0]!) as { error: { code: string; path: string } };
    assert.deepEqual([error.error.code, error.error.path], ['usage', '--only[1]']);
    assert.equal(existsSync(state), false);
  });
});
