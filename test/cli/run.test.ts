import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { killProcessesUnder } from '../support/temp.js';
import { SPEC, killWhenFile, ordivon, runFixture } from './run-fixture.js';

const RUN = ['run', '--spec', 'spec.json', '--stages', 'investigate=a,fix=b', '--state', 'state'];

/** The admitted `assignment.commit` events of the Task, as `stage` names, from `ordivon show`. */
function assignments(dir: string): string[] {
  const shown = ordivon(dir, 'show', 'run-1', '--events', '--state', 'state', '--json').json();
  return (shown.events as Array<{ type: string; data: { stage?: string }; disposition: { admitted: boolean } }>)
    .filter((e) => e.type === 'assignment.commit' && e.disposition.admitted)
    .map((e) => e.data.stage ?? '?');
}

describe('ordivon run', { timeout: 120_000 }, () => {
  it('runs each stage in order with its harness, verifies, prints the outcome and exits 0; a re-run redoes nothing', () => {
    const f = runFixture();
    f.configure('fix');
    const r = ordivon(f.dir, ...RUN, '--json');
    assert.equal(r.status, 0, r.stderr);
    const out = r.json();
    assert.deepEqual([out.taskId, out.state, out.completed], ['run-1', 'completed', true]);
    assert.deepEqual(
      [out.outcome.resultArtifact, out.outcome.result, Object.keys(out.outcome.evidence).sort()],
      ['report.md', '# Fixed\nx is 2 now\n', ['findings.json', 'report.md']],
    );
    for (const line of [
      /investigate g1 +assigned to a/,
      /investigate g1 +run succeeded; artifacts findings\.json/,
      /investigate g1 +settled → waiting/,
      /fix g2 +run succeeded; artifacts report\.md/,
      /fix g2 +verification passed → completed/,
    ])
      assert.match(r.stderr, line);

    const again = ordivon(f.dir, ...RUN, '--json');
    assert.equal(again.status, 0, again.stderr);
    assert.equal(again.json().outcomeDigest, out.outcomeDigest);
    assert.deepEqual(assignments(f.dir), ['investigate', 'fix']);
  });

  it('exits 1 naming why when a stage does not finish, and a re-run retries only that stage', () => {
    const f = runFixture();
    f.configure('fix-nothing');
    const r = ordivon(f.dir, ...RUN, '--json');
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, '', 'a Task not completed is an error: nothing on stdout');
    const out = r.error();
    assert.deepEqual([out.completed, out.state, out.code], [false, 'waiting', 'missing_artifact']);
    assert.match(out.message, /stage fix \(g2\)/);

    f.configure('fix');
    const retried = ordivon(f.dir, ...RUN);
    assert.equal(retried.status, 0, retried.stderr);
    assert.match(retried.stderr, /investigate g1 +finished earlier: skipped/);
    assert.deepEqual(assignments(f.dir), ['investigate', 'fix', 'fix']);
  });

  it('killed (SIGKILL) during a stage and run again, resumes: the finished stage is not dispatched twice', async () => {
    const f = runFixture();
    f.configure('fix-hang-once');
    const killed = await killWhenFile(f.dir, f.hangMark, ...RUN);
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    // The provider it had started hangs (first time only), confined, in a sandbox of its own.
    try {
      const resumed = ordivon(f.dir, ...RUN, '--json');
      assert.equal(resumed.status, 0, resumed.stderr);
      assert.match(resumed.stderr, /resuming task run-1/);
      assert.match(resumed.stderr, /investigate g1 +finished earlier: skipped/);
      assert.equal(resumed.json().completed, true);
      assert.deepEqual(assignments(f.dir), ['investigate', 'fix', 'fix']);
    } finally {
      // Recovery kills a dead executor's provider group once its pid is on record; the kill above
      // may come before that record is durable, so the test stops what may be left.
      killProcessesUnder(f.dir);
    }
  });

  describe('refuses bad input with exit 2 before it opens the state root', () => {
    const cases: Array<[string, (dir: string) => string[], string, string | undefined]> = [
      [
        'a stage the spec does not declare',
        () => ['--stages', 'investigate=a,deploy=b'],
        'stage_unknown',
        '--stages[1]',
      ],
      [
        'a harness the configuration does not name',
        () => ['--stages', 'investigate=a,fix=codex'],
        'harness_unknown',
        '--stages[1]',
      ],
      ['a malformed --stages', () => ['--stages', 'investigate'], 'usage', '--stages[0]'],
      ['a stage named twice', () => ['--stages', 'fix=a,fix=b'], 'usage', '--stages[1]'],
      [
        'a spec that does not parse',
        (dir) => {
          writeFileSync(
            join(dir, 'bad.json'),
            JSON.stringify({ ...SPEC, stages: [{ name: 'x', produces: ['nope.json'] }] }),
          );
          return ['--spec', 'bad.json', '--stages', 'x=a'];
        },
        'invalid_spec',
        'stages.0.produces.0',
      ],
      [
        'a configuration naming an unset envFrom variable',
        (dir) => {
          writeFileSync(
            join(dir, 'env.json'),
            JSON.stringify({
              harnesses: { a: { driver: 'command', command: 'x', envFrom: ['ORDIVON_RUN_TEST_UNSET'] } },
            }),
          );
          return ['--config', 'env.json', '--stages', 'investigate=a'];
        },
        'env_missing',
        'harnesses.a.envFrom.0',
      ],
    ];
    for (const [what, extra, code, path] of cases)
      it(`${what}: ${code}`, () => {
        const f = runFixture();
        f.configure('fix');
        const args = extra(f.dir);
        const base = ['run', '--spec', 'spec.json', '--stages', 'investigate=a,fix=b', '--state', 'state', '--json'];
        const r = ordivon(f.dir, ...base, ...args);
        const error = r.error() as { code: string; path?: string };
        assert.deepEqual([r.status, r.stdout, error.code, error.path], [2, '', code, path]);
        assert.equal(existsSync(f.state), false);
      });
  });
});
