import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The first ```sh block under the README heading `heading`. */
function shellBlockUnder(heading: string): string {
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  const at = readme.indexOf(`\n## ${heading}\n`);
  assert.notEqual(at, -1, `README has a "## ${heading}" section`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, `a sh block under "## ${heading}"`);
  return block[1]!;
}

describe("the README's worked example", () => {
  it('runs as printed: your own Task spec, your own agent behind the command driver, ordivon run to the outcome, diff and apply', () => {
    const script = shellBlockUnder('Your own Task: a worked example');
    const r = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /completed: task quickstart-1, outcome sha256:[0-9a-f]{64}/);
    assert.match(
      r.stdout,
      /result \(report\.md\):\n# Milliseconds parse again/,
      'the result is the report.md the agent wrote',
    );
    const outcome = /completed: task quickstart-1, outcome (sha256:[0-9a-f]{64})/.exec(r.stdout)![1]!;
    assert.match(r.stdout, /\nworkspace: \/.*\/workspaces\/quickstart-1\/attempt-1\n/, 'run prints the workspace');
    assert.match(
      r.stdout,
      /\ndiff --git a\/src\/duration\.js b\/src\/duration\.js\n[\s\S]*\n-.*\(h\|m\|s\|ms\).*\n\+.*\(ms\|h\|m\|s\)/,
      'diff prints the fix against the seed',
    );
    assert.doesNotMatch(r.stdout, /diff --git a\/(report\.md|findings\.json)/, 'the artifacts are not in the patch');
    assert.match(r.stdout, /\napplied: commit [0-9a-f]{40} on new branch ordivon\/quickstart-1 of /);
    assert.match(r.stdout, new RegExp(`\\n    Ordivon-Outcome: ${outcome}\\n`), 'the commit names the outcome');
    assert.match(r.stdout, /\n src\/duration\.js \| 2 \+-\n 1 file changed/, 'one commit with the source change only');
    for (const step of [
      /investigate g1\s+run succeeded; artifacts findings\.json/,
      /fix g2\s+verification passed → completed/,
    ])
      assert.match(r.stderr, step);
  });
});

describe("the README's worked example with Loop v0", () => {
  it('runs as printed: the same Task by driver loop against the scripted model on loopback, its log one file per generation', () => {
    const script = shellBlockUnder('The worked example with Loop v0');
    const r = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /completed: task quickstart-1, outcome sha256:[0-9a-f]{64}/);
    assert.match(r.stdout, /result \(report\.md\):\n# Milliseconds parse again/);
    assert.match(r.stdout, /\ng1\.jsonl\ng2\.jsonl\n/, 'the loop kept its log per generation');
    for (const step of [
      /investigate g1\s+run succeeded; artifacts findings\.json/,
      /fix g2\s+verification passed → completed/,
    ])
      assert.match(r.stderr, step);
  });
});
