import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { BENCH_DEFAULT_ONLY } from '../../bench/cli.js';
import { STARTUP_HELP, STARTUP_LIST, STARTUP_LIST_FLOOR, STARTUP_NODE, VERIFIED } from '../../bench/report/headline.js';
import { copyStateRoot, removeStateCopy } from '../../bench/state-copy.js';
import { timingOf } from '../../bench/startup.bench.js';
import { SCENARIOS, resolvable, runSuite, scenarioNeeds } from '../../bench/suite.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { EventStore, acquireLock } from '../../store/index.js';
import { tempDir } from '../support/temp.js';
import { copyOf } from './fixtures.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));
/** One generator cache for this file's child processes, apart from the machine's. */
const CACHE = tempDir('ordivon-test-bench-cli-cache-');

/** What the tests read of a results file. */
const Results = z.object({
  quick: z.boolean(),
  stateRoot: z.object({ path: z.string(), tasks: z.number(), events: z.number(), copied: z.string() }).optional(),
  headline: z.array(z.object({ key: z.string(), goal: z.string().optional(), met: z.boolean().optional() })),
  notes: z.array(z.string()),
  skipped: z.array(z.object({ scenario: z.string(), reason: z.string() })),
  rows: z.array(
    z.object({ scenario: z.string(), name: z.string(), tasks: z.number().optional(), events: z.number().optional() }),
  ),
});

function bench(args: string[]) {
  return spawnSync(process.execPath, [CLI, 'bench', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ORDIVON_BENCH_CACHE: CACHE },
  });
}

function readResults(dir: string): z.infer<typeof Results> {
  const json = readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.equal(json.length, 1, json.join(', '));
  return Results.parse(JSON.parse(readFileSync(join(dir, json[0]!), 'utf8')));
}

/** Every file under `dir`: its path, size, mtime and sha256. */
function fingerprint(dir: string): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const stat = statSync(full);
      if (stat.isDirectory()) walk(full);
      else
        out.push(
          `${relative(dir, full)} ${stat.size} ${stat.mtimeMs} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`,
        );
    }
  };
  walk(dir);
  return out.sort();
}

describe('ordivon bench', () => {
  it('defaults to the recovery benchmarks and startup, each a scenario of the suite', () => {
    assert.deepEqual([...BENCH_DEFAULT_ONLY], ['recovery', 'floor', 'peer', 'startup']);
    for (const scenario of BENCH_DEFAULT_ONLY) assert.ok((SCENARIOS as readonly string[]).includes(scenario), scenario);
  });

  it('--quick writes a results file and SVG with the recovery and startup scenarios, and the startup goals', () => {
    const out = tempDir();
    const result = bench(['--quick', '--json', '--out', out]);
    assert.equal(result.status, 0, result.stderr);
    const results = readResults(out);
    assert.equal(results.quick, true);
    const answer = z
      .object({ files: z.object({ results: z.string(), svg: z.string() }) })
      .parse(JSON.parse(result.stdout));
    assert.ok(existsSync(answer.files.results) && existsSync(answer.files.svg));
    assert.match(readFileSync(answer.files.svg, 'utf8'), /^<svg /);
    const names = (scenario: string) => results.rows.filter((r) => r.scenario === scenario).map((r) => r.name);
    assert.ok(names('recovery').includes(VERIFIED));
    assert.deepEqual(names('startup'), [STARTUP_NODE, STARTUP_HELP, STARTUP_LIST, STARTUP_LIST_FLOOR]);
    assert.ok(results.headline.some((h) => h.key === 'startup_list_floor_vs_node'));
    for (const key of ['startup_help_vs_node', 'startup_list_vs_node']) {
      const head = results.headline.find((h) => h.key === key);
      assert.ok(head, key);
      assert.equal(head.goal, '≤ 2×');
      assert.equal(typeof head.met, 'boolean');
    }
    // A clone has the SQLite peer installed: nothing of the default set is skipped here.
    assert.deepEqual(results.skipped, []);
    assert.ok(names('peer').length > 0);
  });

  it('--only reconciliation times findJobs at two registry sizes and judges flatness, skipping nothing', () => {
    const out = tempDir();
    const result = bench(['--quick', '--only', 'reconciliation', '--out', out]);
    assert.equal(result.status, 0, result.stderr);
    const results = readResults(out);
    assert.deepEqual(results.skipped, []);
    const sizes = results.rows
      .filter((r) => r.scenario === 'reconciliation')
      .map((r) => /, ([\d,]+) jobs/.exec(r.name)?.[1]);
    assert.deepEqual([...new Set(sizes)].sort(), ['1,000', '100,000']);
    assert.equal(typeof results.headline.find((h) => h.key === 'reconciliation_flat')?.met, 'boolean');
  });

  it('--state times a copy of that state root and leaves the root as it was, byte for byte', async () => {
    const root = await copyOf(10, 10);
    const before = fingerprint(root);
    const out = tempDir();
    const result = bench(['--quick', '--state', root, '--only', 'recovery,floor', '--out', out]);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(fingerprint(root), before);
    const results = readResults(out);
    assert.deepEqual(results.stateRoot, { path: root, tasks: 10, events: 100, copied: 'files' });
    const verified = results.rows.find((r) => r.scenario === 'recovery' && r.name === VERIFIED);
    assert.deepEqual([verified?.tasks, verified?.events], [10, 100]);
    assert.ok(!results.rows.some((r) => r.name.startsWith('before:')), 'no core-commit rebuild of a user root');
    assert.ok(results.rows.some((r) => r.scenario === 'floor' && r.events === 100));
    // The copy under the cache is gone.
    assert.deepEqual(
      readdirSync(CACHE).filter((name) => name.startsWith('state-copy-')),
      [],
    );
  });

  it('copies a root that a process holds as of one read transaction, its data files untouched', async () => {
    const root = await copyOf(10, 10);
    const release = acquireLock(root, 'test holder');
    try {
      const data = fingerprint(join(root, 'lmdb')).filter((line) => line.startsWith('data.mdb '));
      const copy = await copyStateRoot(root, tempDir());
      try {
        assert.deepEqual([copy.copied, copy.tasks, copy.events], ['read transaction', 10, 100]);
        assert.ok(existsSync(join(copy.root, 'lmdb', 'data.mdb')));
      } finally {
        removeStateCopy(copy);
      }
      assert.deepEqual(
        fingerprint(join(root, 'lmdb')).filter((line) => line.startsWith('data.mdb ')),
        data,
      );
    } finally {
      release();
    }
  });

  it('refuses a missing state root with the store’s code, writing nothing', () => {
    const out = join(tempDir(), 'out');
    const result = bench(['--quick', '--state', join(tempDir(), 'none'), '--out', out]);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /ordivon: state_missing: /);
    assert.equal(existsSync(out), false);
  });

  it('refuses a state root with no events as usage on --state, writing nothing', async () => {
    const root = join(tempDir(), 'empty');
    await EventStore.open({ root, kinds: OBJECT_KINDS, purpose: 'test' }).close();
    const out = join(tempDir(), 'out');
    const result = bench(['--quick', '--json', '--state', root, '--out', out]);
    assert.equal(result.status, 2);
    const error = z
      .object({ error: z.object({ code: z.string(), path: z.string(), message: z.string() }) })
      .parse(JSON.parse(result.stderr.trimEnd().split('\n').at(-1)!)).error;
    assert.equal(result.stdout, '', 'an error prints nothing on stdout');
    assert.deepEqual([error.code, error.path], ['usage', '--state']);
    assert.match(error.message, /holds no events/);
    assert.equal(existsSync(out), false);
    assert.deepEqual(
      readdirSync(CACHE).filter((name) => name.startsWith('state-copy-')),
      [],
    );
  });

  for (const [argv, message] of [
    [['--only', 'recovery,speed'], /usage: --only\[1\]: /],
    [['--sizes', '100x'], /usage: --sizes\[0\]: expected TASKSxEVENTS/],
    [['--out', ''], /usage: --out/],
  ] as const) {
    it(`refuses ${argv.join(' ')} naming the flag, before running or writing anything`, () => {
      const cwd = tempDir();
      const result = spawnSync(process.execPath, [CLI, 'bench', ...argv], { encoding: 'utf8', cwd });
      assert.equal(result.status, 2);
      assert.match(result.stderr, message);
      assert.deepEqual(readdirSync(cwd), []);
    });
  }
});

describe('bench suite skips', () => {
  it('a scenario whose package cannot be resolved is skipped with its reason, in the results file', async () => {
    const out = tempDir();
    const asked: string[] = [];
    const run = await runSuite({
      quick: true,
      only: ['peer', 'temporal', 'cluster'],
      baseline: false,
      outDir: out,
      log: () => {},
      resolve: (specifier) => {
        asked.push(specifier);
        return specifier !== 'better-sqlite3' && !specifier.startsWith('@temporalio/') && specifier !== 'pg';
      },
    });
    assert.deepEqual(
      run.results.skipped.map((s) => s.scenario),
      ['peer', 'temporal', 'cluster'],
    );
    const reason = (scenario: string) => run.results.skipped.find((s) => s.scenario === scenario)!.reason;
    assert.match(reason('peer'), /^better-sqlite3 cannot be resolved \(the SQLite peer/);
    assert.match(
      reason('temporal'),
      /^@temporalio\/worker, @temporalio\/common, @temporalio\/proto, @temporalio\/workflow cannot be resolved/,
    );
    assert.match(reason('cluster'), /^pg cannot be resolved/);
    assert.deepEqual(run.results.rows, []);
    assert.ok(asked.includes('better-sqlite3'));
    // Printed too, and in the file as written.
    assert.match(run.report, /note: peer skipped: better-sqlite3 cannot be resolved/);
    assert.deepEqual(readResults(out).skipped, run.results.skipped);
    assert.equal(run.svgPath, undefined);
  });

  it('the default resolver finds installed packages and files, not missing ones', () => {
    assert.equal(resolvable('zod'), true);
    assert.equal(resolvable('better-sqlite3'), true);
    assert.equal(resolvable('ordivon-no-such-package'), false);
    assert.equal(resolvable('./suite.js'), true);
    assert.equal(resolvable('./no-such-file.js'), false);
    assert.deepEqual(scenarioNeeds('recovery'), []);
    assert.deepEqual(scenarioNeeds('peer'), ['better-sqlite3']);
  });

  it('startup timings are medians of their runs', () => {
    assert.deepEqual(timingOf([30, 10, 20]), { medianMs: 20, minMs: 10, maxMs: 30, iterations: 3 });
    assert.deepEqual(timingOf([4, 1, 3, 2]), { medianMs: 2.5, minMs: 1, maxMs: 4, iterations: 4 });
  });
});
