import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CHROMIUM } from '../../support/chromium.js';
import { tempDir } from '../../support/temp.js';

const CLI = fileURLToPath(new URL('../../../cli/ordivon.js', import.meta.url));

function demo(state: string, ...args: string[]) {
  return demoWith({}, state, ...args);
}

function demoWith(env: NodeJS.ProcessEnv, state: string, ...args: string[]) {
  return spawnSync(process.execPath, [CLI, 'demo', '--workload', 'world-w1', '--state', state, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
}

interface Report {
  rows: Array<{ variant: string; operation: string; outcome: string; performs: number }>;
  summary: Array<{ variant: string; surface: string }>;
  browser?: { chromium?: string; skipped?: string };
  failed: string[];
  results: string;
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

  it(
    'runs a browser trajectory under (a), (c) and (d) in real Chromium, each variant on a web app of its own, with b n/a in the table',
    { skip: CHROMIUM.skip },
    () => {
      const state = join(tempDir('ordivon-w1-demo-'), 'state');
      const r = demoWith(
        { ORDIVON_CHROMIUM: CHROMIUM.need() },
        state,
        '--only',
        'webapp-orders-commit-then-drop',
        '--fresh',
      );
      assert.equal(r.status, 0, r.stderr.slice(-3000));
      assert.match(r.stdout, /^\| variant \| surface \| trajectories \|/m);
      assert.match(r.stdout, /^\| b-key \| browser \| n\/a \|/m);
      assert.match(r.stdout, /^b-key on the browser: n\/a, a form has no idempotency key/m);
      const report = JSON.parse(readFileSync(join(state, 'world-w1-results.json'), 'utf8')) as Report;
      assert.deepEqual(report.failed, []);
      assert.deepEqual(report.browser, { chromium: CHROMIUM.need() });
      assert.deepEqual(
        report.rows.map((row) => `${row.variant} ${row.operation} ${row.outcome} ${row.performs}`),
        ['a-retry webapp-orders succeeded 2', 'c-lookup webapp-orders succeeded 1', 'd-host webapp-orders succeeded 1'],
      );
      assert.deepEqual(
        report.summary.map((s) => `${s.variant} ${s.surface}`),
        ['a-retry browser', 'c-lookup browser', 'd-host browser'],
      );
    },
  );

  it('without Chromium skips the browser rows and says why; under CI=true the same run fails naming it', () => {
    const env = { ORDIVON_CHROMIUM: '/nonexistent/chromium', CI: '' };
    const state = join(tempDir('ordivon-w1-demo-'), 'state');
    const r = demoWith(env, state, '--only', 'webapp-orders-none', '--json', '--fresh');
    assert.equal(r.status, 0, r.stderr.slice(-3000));
    const report = JSON.parse(r.stdout) as Report;
    const why = 'Chromium not found: ORDIVON_CHROMIUM=/nonexistent/chromium is not an executable';
    assert.deepEqual([report.browser, report.rows, report.failed], [{ skipped: why }, [], []]);
    assert.match(r.stderr, /browser rows skipped: Chromium not found/);
    const ci = demoWith({ ...env, CI: 'true' }, state, '--only', 'webapp-orders-none', '--json', '--fresh');
    assert.equal(ci.status, 1);
    const error = JSON.parse(ci.stderr.trim().split('\n').at(-1)!) as { error: { code: string; message: string } };
    assert.equal(error.error.code, 'demo_failed');
    assert.match(error.error.message, /browser rows: CI=true, and Chromium not found/);
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
