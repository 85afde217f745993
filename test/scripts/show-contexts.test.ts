import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startServe } from '../service/serve-child.js';
import { ordivon, runFixture } from './run-fixture.js';

const RUN = ['run', '--spec', 'spec.json', '--stages', 'investigate=a,fix=b', '--state', 'state'];
const HEX16 = /[0-9a-f]{16}/;

describe('ordivon show: Contexts and refusals', { timeout: 120_000 }, () => {
  it('lists each Context with its items, trust and claim, the same from the store and through a running service', async () => {
    const f = runFixture();
    f.configure('fix-nothing');
    assert.equal(ordivon(f.dir, ...RUN).status, 1, 'fix writes nothing: the Task waits');

    const text = ordivon(f.dir, 'show', 'run-1', '--state', 'state');
    assert.equal(text.status, 0, text.stderr);
    const lines = text.stdout.split('\n');
    const headings = lines.filter((l) => l.startsWith('  context '));
    assert.equal(headings.length, 2, text.stdout);
    assert.match(
      headings[0]!,
      new RegExp(`^  context r3 g1 investigate ${HEX16.source}  \\(compiled before read sets`),
    );
    assert.match(headings[1]!, new RegExp(`^  context r\\d+ g2 fix ${HEX16.source}  \\(compiled before read sets`));
    // Items of the second Context, in order, each with trust, claim and a short digest.
    const second = lines.slice(lines.indexOf(headings[1]!) + 1, lines.indexOf(headings[1]!) + 5);
    for (const [line, pattern] of [
      [second[0], /^ {4}task-spec +trusted +unverified +sha256:[0-9a-f]{12}… +selected: the goal, stages/],
      [second[1], /^ {4}assignment:g2 +trusted +unverified +sha256:[0-9a-f]{12}… +selected: stage fix by b/],
      [second[2], /^ {4}workspace +untrusted +unverified +sha256:[0-9a-f]{12}…/],
      [
        second[3],
        /^ {4}evidence:findings\.json +untrusted +unverified +sha256:[0-9a-f]{12}… +selected: validated findings\.json from generation 1/,
      ],
    ] as const)
      assert.match(line ?? '', pattern, text.stdout);

    const json = ordivon(f.dir, 'show', 'run-1', '--state', 'state', '--json').json();
    assert.deepEqual(
      json.contexts.map((c: { generation: number; stage: string; format: string; items: unknown[] }) => [
        c.generation,
        c.stage,
        c.format,
        c.items.length,
      ]),
      [
        [1, 'investigate', 'sources', 3],
        [2, 'fix', 'sources', 4],
      ],
    );
    assert.deepEqual(
      json.rejections.map((r: { reason: string; causes?: unknown }) => [r.reason, r.causes]),
      [['missing_artifact', undefined]],
      'a code whose causes the journal does not name has none',
    );

    const serve = await startServe(
      ['--state', 'state', '--port', '0', '--config', join(f.dir, 'ordivon.config.json')],
      {},
      { cwd: f.dir },
    );
    try {
      const viaService = ordivon(f.dir, 'show', 'run-1', '--state', 'state');
      assert.equal(viaService.status, 0, viaService.stderr);
      assert.equal(viaService.stdout, text.stdout);
      const jsonViaService = ordivon(f.dir, 'show', 'run-1', '--state', 'state', '--json').json();
      assert.deepEqual([jsonViaService.contexts, jsonViaService.rejections], [json.contexts, json.rejections]);
    } finally {
      assert.equal((await serve.stop()).code, 0, serve.stderr());
    }
  });
});
