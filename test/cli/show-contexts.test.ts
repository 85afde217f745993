import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DECISION_HARNESSES, decisionSpec, decisionWorld } from '../support/decision-task.js';
import { tempDir } from '../support/temp.js';
import { startServe } from '../service/serve-child.js';
import { ordivon } from './run-fixture.js';

const FOREIGN = `sha256:${'a'.repeat(64)}`;

/** A spec with trusted world sources, an untrusted note and a decision stage, and the harnesses to run it. */
function decisionFixture(): string {
  const dir = tempDir('ordivon-show-');
  writeFileSync(join(dir, 'spec.json'), JSON.stringify({ ...decisionSpec(decisionWorld()), taskId: 'show-1' }));
  writeFileSync(join(dir, 'ordivon.config.json'), JSON.stringify({ harnesses: DECISION_HARNESSES }));
  return dir;
}

describe('ordivon show: Contexts and refusals', { timeout: 120_000 }, () => {
  it('lists each Context with its items (trust, claim, where, dependencies) and candidates, and each refusal with its causes; the same through a running service', async () => {
    const dir = decisionFixture();
    // The provider picks the candidate only the untrusted note supports: refused, the Task waits.
    const run = ordivon(dir, 'run', '--spec', 'spec.json', '--stages', 'survey=surveyor,choose=pick-strip-checks');
    assert.equal(run.status, 1, run.stderr);
    const sent = ordivon(
      dir,
      'send',
      'show-1',
      JSON.stringify({ type: 'decision.submit', contextDigest: FOREIGN, candidateId: 'upgrade' }),
    );
    assert.equal(sent.status, 1, 'retained and refused');

    const text = ordivon(dir, 'show', 'show-1');
    assert.equal(text.status, 0, text.stderr);
    const lines = text.stdout.split('\n');
    const headings = lines.filter((l) => l.startsWith('  context '));
    assert.equal(headings.length, 2, text.stdout);
    assert.match(headings[0]!, /^ {2}context r3 g1 survey [0-9a-f]{16}  goal revision 1$/);
    assert.match(headings[1]!, /^ {2}context r\d+ g2 choose ([0-9a-f]{16})  goal revision 1$/);
    const choose = /g2 choose ([0-9a-f]{16})/.exec(headings[1]!)![1]!;
    const line = (start: string) => lines.slice(lines.indexOf(headings[1]!)).find((l) => l.startsWith(start)) ?? '';
    for (const [start, pattern] of [
      ['    goal ', /^ {4}goal +trusted +asserted +sha256:[0-9a-f]{12}… +revision 1 +selected: /],
      ['    policy ', /^ {4}policy +trusted +asserted +sha256:[0-9a-f]{12}… +world POLICY\.md +selected: /],
      [
        '    tools ',
        /^ {4}tools +trusted +asserted +sha256:[0-9a-f]{12}… +world tools\.json +depends on policy +selected/,
      ],
      ['    notes ', /^ {4}notes +untrusted +unverified +sha256:[0-9a-f]{12}… +workspace NOTES\.md +selected: /],
      ['    workspace ', /^ {4}workspace +untrusted +verified +sha256:/],
      ['    evidence:survey.md ', /^ {4}evidence:survey\.md +untrusted +unverified +sha256:/],
      [
        '    candidate upgrade ',
        /^ {4}candidate upgrade +trusted +supported by policy \(trusted\), tools \(trusted\) +action: \S+ -e /,
      ],
      [
        '    candidate strip-checks ',
        /^ {4}candidate strip-checks +untrusted +supported by notes \(untrusted\) +action: /,
      ],
    ] as const)
      assert.match(line(start), pattern, text.stdout);

    const refusals = lines.slice(lines.findIndex((l) => l.startsWith('  rejected ')));
    assert.match(
      refusals[0]!,
      /^ {2}rejected r\d+ decision\.submit: untrusted_authority$/,
      'only the latest rejection keeps its detail',
    );
    assert.equal(refusals[1], '    candidate strip-checks supported by notes (untrusted)');
    assert.match(refusals[2]!, /^ {2}rejected r\d+ decision\.submit: context_mismatch \(/);
    assert.equal(refusals[3], `    named context ${'a'.repeat(16)}, current ${choose}`);

    const json = ordivon(dir, 'show', 'show-1', '--json').json();
    assert.deepEqual(
      json.rejections.map((r: { code: string; causes: Array<{ kind: string }> }) => [
        r.code,
        r.causes.map((c) => c.kind),
      ]),
      [
        ['untrusted_authority', ['support']],
        ['context_mismatch', ['context']],
      ],
    );
    assert.equal(json.contexts[1].candidates.length, 3);

    const serve = await startServe(['--port', '0', '--config', 'ordivon.config.json'], {}, { cwd: dir });
    try {
      const viaService = ordivon(dir, 'show', 'show-1');
      assert.equal(viaService.status, 0, viaService.stderr);
      assert.equal(viaService.stdout, text.stdout);
      const jsonViaService = ordivon(dir, 'show', 'show-1', '--json').json();
      assert.deepEqual([jsonViaService.contexts, jsonViaService.rejections], [json.contexts, json.rejections]);
    } finally {
      assert.equal((await serve.stop()).code, 0, serve.stderr());
    }
  });
});
