import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { costOf, type CompareResults } from '../../workloads/loop-compare/index.js';
import type { SeenRequest } from '../../workloads/loop-compare/variants.js';
import { tempDir } from '../support/temp.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));

const request = (index: number, toolResults: number, answered = true): SeenRequest => ({
  index,
  toolResults,
  requestChars: 400,
  answerChars: 0,
  answered,
});

describe('what a comparison Task cost, counted at its models', () => {
  it('a conversation that goes on after a kill counts its tool calls once; one started over counts them again', () => {
    // Loop v0: two tool calls, the third request held by the kill, asked again, then a fourth.
    const resumed = costOf([request(0, 0), request(1, 1), request(2, 2, false), request(2, 2), request(3, 3)]);
    assert.deepEqual(resumed, { modelCalls: 5, turns: 4, toolCalls: 3, tokens: 400 });
    // A harness whose stage is run again from its first turn: its two calls ran twice.
    const restarted = costOf([
      request(0, 0),
      request(1, 1),
      request(2, 2, false),
      request(0, 0),
      request(1, 1),
      request(2, 2),
    ]);
    assert.deepEqual(restarted, { modelCalls: 6, turns: 5, toolCalls: 4, tokens: 500 });
    // A side call (opencode's title) is a call, not a turn, and carries no tool result.
    assert.deepEqual(costOf([request(-1, 0), request(0, 0)]), { modelCalls: 2, turns: 1, toolCalls: 0, tokens: 200 });
  });
});

describe('ordivon demo --workload loop-compare', { timeout: 600_000 }, () => {
  it('runs duration-v1 with the gateway, Loop v0 and the real codex app-server: every Task completes, every false claim is refused, and only the harness that starts over pays for the kill', () => {
    const state = join(tempDir('ordivon-loop-compare-'), 'state');
    const r = spawnSync(
      process.execPath,
      [
        CLI,
        'demo',
        '--workload',
        'loop-compare',
        '--only',
        'duration-v1,gateway,loop,codex',
        '--state',
        state,
        '--json',
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr.slice(-3000));
    const report = JSON.parse(r.stdout) as { results: CompareResults; resultsFile: string; failed: unknown[] };
    assert.deepEqual(report.failed, []);
    const written = JSON.parse(readFileSync(report.resultsFile, 'utf8')) as CompareResults;
    assert.deepEqual(written.rows, report.results.rows);
    const row = (variant: string) => written.rows.find((x) => x.variant === variant)!;
    assert.deepEqual(
      written.rows.map((x) => `${x.workload}/${x.variant}`),
      ['duration-v1/gateway', 'duration-v1/loop', 'duration-v1/codex'],
    );
    for (const x of written.rows) {
      assert.equal(x.honest.completed && x.killed.completed, true, x.variant);
      assert.equal(x.false.completed, false, x.variant);
    }
    // One call per stage, no tools: nothing was in flight but the held call itself.
    assert.equal(row('gateway').honest.turns, 3);
    assert.equal(row('gateway').honest.toolCalls, 0);
    assert.deepEqual(row('gateway').again, { turns: 0, toolCalls: 0, tokens: 0 });
    // Loop v0 goes on from its log: the same turns and tool calls as without the kill. The kill
    // stage (fix) wrote fix.patch before the kill: the resumed run delivers it, no new run of the
    // stage is needed (a fix run again from scratch would show here as turns asked again).
    assert.deepEqual(row('loop').again, { turns: 0, toolCalls: 0, tokens: 0 });
    assert.equal(row('loop').honest.toolCalls, 8);
    // Codex's stage starts over: the two turns before the held one, and their tool calls, again.
    assert.equal(row('codex').again.turns, 2);
    assert.equal(row('codex').again.toolCalls, 2);
    assert.ok(row('codex').again.tokens > 0);
    assert.ok(written.permanentLines.loop.lines > 0);
  });

  it('--only names workloads and variants: anything else is a usage error, nothing run', () => {
    const state = join(tempDir('ordivon-loop-compare-'), 'state');
    const r = spawnSync(
      process.execPath,
      [CLI, 'demo', '--workload', 'loop-compare', '--only', 'hamilton-v1,claude', '--state', state, '--json'],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 2);
    const error = (JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { error: { code: string; path: string } }).error;
    assert.equal(error.code, 'usage');
    assert.equal(error.path, '--only[1]');
  });
});
