import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseBenchArgs } from '../../bench/run.js';
import { SCENARIOS } from '../../bench/scenarios.js';
import { tempDir } from '../support/temp.js';

const RUN = fileURLToPath(new URL('../../bench/run.js', import.meta.url));

describe('npm run bench arguments', () => {
  it('parses scenarios and sizes', () => {
    const parsed = parseBenchArgs([
      '--quick',
      '--only',
      'recovery,floor',
      '--sizes',
      '100x10,1000x100',
      '--no-baseline',
    ]);
    assert.ok(parsed.ok);
    assert.deepEqual(
      [parsed.args.quick, parsed.args.only, parsed.args.sizes, parsed.args['no-baseline']],
      [
        true,
        ['recovery', 'floor'],
        [
          { tasks: 100, events: 10 },
          { tasks: 1000, events: 100 },
        ],
        true,
      ],
    );
    const defaults = parseBenchArgs([]);
    assert.ok(defaults.ok);
    // Without --only, every scenario runs.
    assert.deepEqual([defaults.args.only, defaults.args.sizes], [[...SCENARIOS], undefined]);
  });

  for (const [argv, path] of [
    [['--only', 'recovery,speed'], /^--only\.1: /],
    [['--sizes', '100x'], /^--sizes\.0: expected TASKSxEVENTS/],
    [['--sizes', '0x10'], /^--sizes\.0: /],
    [['--fast'], /Unknown option '--fast'/],
  ] as const) {
    it(`refuses ${argv.join(' ')} naming the option`, () => {
      const parsed = parseBenchArgs([...argv]);
      assert.equal(parsed.ok, false);
      if (!parsed.ok) {
        assert.equal(parsed.code, 'usage');
        assert.match(parsed.message, path);
      }
    });
  }

  it('exits 2 with the usage on a bad argument, before running or writing anything', () => {
    const out = tempDir();
    const result = spawnSync(process.execPath, [RUN, '--sizes', '10by10', '--out', out], { encoding: 'utf8' });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /bench: usage: --sizes\.0: expected TASKSxEVENTS[\s\S]*usage: npm run bench/);
    assert.deepEqual(readdirSync(out), []);
  });

  it('writes the results and, when no recovery scenario ran, no plot', () => {
    const out = tempDir();
    const result = spawnSync(process.execPath, [RUN, '--quick', '--only', 'reconciliation', '--out', out], {
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    const files = readdirSync(out);
    assert.equal(files.length, 1, files.join(', '));
    assert.match(files[0]!, /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\.json$/);
    assert.match(result.stdout, /no recovery scenario ran: no plot/);
  });

  it('a scenario file run on its own refuses an unknown option the same way (no silent typo of --quick)', () => {
    for (const file of ['floors/floor.bench.js', 'recovery.bench.js', 'cluster/find-jobs.bench.js']) {
      const result = spawnSync(
        process.execPath,
        [fileURLToPath(new URL(`../../bench/${file}`, import.meta.url)), '--quikc'],
        { encoding: 'utf8' },
      );
      assert.equal(result.status, 2, file);
      assert.match(
        result.stderr,
        new RegExp(
          `${file.replace('.js', '')}: usage: Unknown option '--quikc'[\\s\\S]*usage: node dist/bench/${file}`,
        ),
      );
    }
  });
});
