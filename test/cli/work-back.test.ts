import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { git, ordivon, runFixture, seedRepo, type RunFixture } from './run-fixture.js';

const RUN = ['run', '--spec', 'spec.json', '--stages', 'investigate=a,fix=b', '--state', 'state'];

const sha256 = (bytes: Buffer | string) => 'sha256:' + createHash('sha256').update(bytes).digest('hex');

describe('ordivon run --apply', { timeout: 120_000 }, () => {
  it('commits the accepted change as exactly one commit on a new branch; the checked-out branch and tree stay as they were', () => {
    const f = runFixture();
    f.configure('fix');
    const repo = seedRepo(f, 'repo');
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    const r = ordivon(f.dir, ...RUN, '--apply', '--repo', repo, '--json');
    assert.equal(r.status, 0, r.stderr);
    const out = r.json();
    assert.equal(out.workspace, join(f.dir, 'state', 'workspaces', 'run-1', 'attempt-1'));
    assert.deepEqual([out.apply.branch, out.apply.parent], ['ordivon/run-1', head]);

    assert.equal(git(repo, 'rev-list', '--count', `${head}..ordivon/run-1`).trim(), '1');
    assert.equal(git(repo, 'rev-parse', 'ordivon/run-1').trim(), out.apply.commit);
    const stat = git(repo, 'show', '--stat', '--format=%B', 'ordivon/run-1');
    assert.match(stat, /Ordivon task run-1: the accepted change/);
    assert.match(stat, new RegExp(`Ordivon-Outcome: ${out.outcomeDigest}`));
    assert.match(stat, / a\.js \| 2 \+-\n 1 file changed/, 'only the source file; the artifacts are not committed');
    assert.equal(git(repo, 'show', 'ordivon/run-1:a.js'), 'export const x = 2;\n');

    assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), head);
    assert.equal(git(repo, 'symbolic-ref', '--short', 'HEAD').trim(), 'main');
    assert.equal(git(repo, 'status', '--porcelain'), '');
    assert.equal(readFileSync(join(repo, 'a.js'), 'utf8'), 'export const x = 1;\n');
  });

  it('answers a refusal after the Task completed as its error with exit 1: repo_mismatch, no branch made', () => {
    const f = runFixture();
    f.configure('fix');
    const repo = seedRepo(f, 'repo');
    writeFileSync(join(repo, 'a.js'), 'export const x = 7;\n');
    git(repo, 'commit', '-q', '-am', 'moved on');
    const r = ordivon(f.dir, ...RUN, '--apply', '--repo', repo, '--json');
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, '');
    const out = r.error();
    assert.deepEqual([out.completed, out.state, out.code], [true, 'completed', 'repo_mismatch']);
    assert.equal(git(repo, 'branch', '--list', 'ordivon/*'), '');
    const text = ordivon(f.dir, 'apply', 'run-1', '--repo', repo, '--state', 'state');
    assert.match(
      text.stderr,
      /ordivon: repo_mismatch: HEAD \([0-9a-f]{12}\) of .* is not the tree task run-1 was seeded with/,
    );
  });

  it('refuses --repo without --apply as usage (exit 2), leaving no state root', () => {
    const f = runFixture();
    f.configure('fix');
    const r = ordivon(f.dir, ...RUN, '--repo', f.dir);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /ordivon: usage: --repo and --branch go with --apply/);
    assert.equal(existsSync(join(f.dir, 'state')), false);
  });

  it('refuses a dirty repository before any stage runs, leaving no state root', () => {
    const f = runFixture();
    f.configure('fix');
    const repo = seedRepo(f, 'repo');
    writeFileSync(join(repo, 'a.js'), 'export const x = 3;\n');
    const r = ordivon(f.dir, ...RUN, '--apply', '--repo', repo);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /ordivon: repo_dirty: /);
    assert.equal(existsSync(join(f.dir, 'state')), false);
  });
});

describe('ordivon diff, export and apply on a completed Task', { timeout: 120_000 }, () => {
  let f: RunFixture;
  let outcomeDigest: string;
  before(() => {
    f = runFixture();
    f.configure('fix');
    const r = ordivon(f.dir, ...RUN, '--json');
    assert.equal(r.status, 0, r.stderr);
    outcomeDigest = r.json().outcomeDigest;
    assert.match(r.json().workspace, /workspaces\/run-1\/attempt-1$/);
  });

  it('diff prints the change from the seed to the accepted workspace, source files only', () => {
    const r = ordivon(f.dir, 'diff', 'run-1', '--state', 'state');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^diff --git a\/a\.js b\/a\.js\n/);
    assert.match(r.stdout, /\n-export const x = 1;\n\+export const x = 2;\n/);
    assert.doesNotMatch(r.stdout, /report\.md|findings\.json/);
    const json = ordivon(f.dir, 'diff', 'run-1', '--state', 'state', '--json').json();
    assert.equal(json.outcomeDigest, outcomeDigest);
    assert.equal(json.patch, r.stdout);
  });

  it('show prints the workspace path', () => {
    const workspace = join(f.dir, 'state', 'workspaces', 'run-1', 'attempt-1');
    assert.equal(ordivon(f.dir, 'show', 'run-1', '--state', 'state', '--json').json().workspace, workspace);
    assert.match(
      ordivon(f.dir, 'show', 'run-1', '--state', 'state').stdout,
      new RegExp(`\n  workspace: ${workspace}\n`),
    );
  });

  it('export writes the held artifacts, the patch and a manifest of their digests; a non-empty directory is refused', () => {
    const to = join(f.dir, 'export');
    const r = ordivon(f.dir, 'export', 'run-1', '--to', to, '--state', 'state');
    assert.equal(r.status, 0, r.stderr);
    const manifest = JSON.parse(readFileSync(join(to, 'manifest.json'), 'utf8'));
    assert.deepEqual([manifest.taskId, manifest.outcomeDigest], ['run-1', outcomeDigest]);
    assert.deepEqual(
      manifest.files.map((file: { path: string }) => file.path),
      ['artifacts/findings.json', 'artifacts/report.md', 'change.patch'],
    );
    for (const file of manifest.files as Array<{ path: string; digest: string }>)
      assert.equal(sha256(readFileSync(join(to, file.path))), file.digest, file.path);
    assert.equal(readFileSync(join(to, 'artifacts', 'report.md'), 'utf8'), '# Fixed\nx is 2 now\n');
    assert.equal(
      readFileSync(join(to, 'change.patch'), 'utf8'),
      ordivon(f.dir, 'diff', 'run-1', '--state', 'state').stdout,
    );

    const again = ordivon(f.dir, 'export', 'run-1', '--to', to, '--state', 'state');
    assert.equal(again.status, 1);
    assert.match(again.stderr, /export_exists/);
  });

  it('apply refuses a repository whose HEAD is not the tree the Task was seeded with: repo_mismatch', () => {
    const repo = seedRepo(f, 'repo-moved');
    writeFileSync(join(repo, 'b.js'), 'export const y = 1;\n');
    git(repo, 'add', 'b.js');
    git(repo, 'commit', '-q', '-m', 'another file');
    const r = ordivon(f.dir, 'apply', 'run-1', '--repo', repo, '--state', 'state', '--json');
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.error().code, 'repo_mismatch');
    assert.equal(git(repo, 'branch', '--list', 'ordivon/*'), '');
  });

  it('apply refuses a dirty working tree: repo_dirty', () => {
    const repo = seedRepo(f, 'repo-dirty');
    writeFileSync(join(repo, 'a.js'), 'export const x = 5;\n');
    const r = ordivon(f.dir, 'apply', 'run-1', '--repo', repo, '--state', 'state');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /ordivon: repo_dirty: .* has uncommitted changes to tracked files/);
    assert.equal(git(repo, 'branch', '--list', 'ordivon/*'), '');
  });

  it('apply refuses an existing branch: branch_exists; with --branch it makes that branch', () => {
    const repo = seedRepo(f, 'repo-branch');
    git(repo, 'branch', 'ordivon/run-1');
    const r = ordivon(f.dir, 'apply', 'run-1', '--repo', repo, '--state', 'state');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /ordivon: branch_exists: branch ordivon\/run-1 already exists/);
    assert.equal(git(repo, 'rev-parse', 'ordivon/run-1').trim(), git(repo, 'rev-parse', 'HEAD').trim());

    const named = ordivon(f.dir, 'apply', 'run-1', '--repo', repo, '--branch', 'fix/x', '--state', 'state');
    assert.equal(named.status, 0, named.stderr);
    assert.equal(git(repo, 'show', 'fix/x:a.js'), 'export const x = 2;\n');
  });

  it('apply refuses a directory outside any git work tree: not_a_repository', () => {
    const plain = join(f.dir, 'plain');
    cpSync(join(f.dir, 'seed'), plain, { recursive: true });
    const r = ordivon(f.dir, 'apply', 'run-1', '--repo', plain, '--state', 'state', '--json');
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.error().code, 'not_a_repository');
  });

  it('diff refuses a seed directory changed since the Task was seeded: seed_changed (after the other tests on the shared Task: it edits the seed)', () => {
    writeFileSync(join(f.dir, 'seed', 'a.js'), 'export const x = 0;\n');
    const r = ordivon(f.dir, 'diff', 'run-1', '--state', 'state', '--json');
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.error().code, 'seed_changed');
  });

  it('apply, diff and export refuse a workspace changed after acceptance: workspace_changed', () => {
    const g = runFixture();
    g.configure('fix');
    assert.equal(ordivon(g.dir, ...RUN).status, 0);
    const repo = seedRepo(g, 'repo');
    writeFileSync(join(g.dir, 'state', 'workspaces', 'run-1', 'attempt-1', 'a.js'), 'export const x = 9;\n');
    for (const args of [
      ['diff', 'run-1'],
      ['export', 'run-1', '--to', join(g.dir, 'out')],
      ['apply', 'run-1', '--repo', repo],
    ]) {
      const r = ordivon(g.dir, ...args, '--state', 'state', '--json');
      assert.equal(r.status, 1, `${args[0]}: ${r.stderr}`);
      assert.equal(r.error().code, 'workspace_changed', args[0]);
    }
    assert.equal(existsSync(join(g.dir, 'out')), false);
  });
});

describe('ordivon apply on a Task without an outcome', { timeout: 120_000 }, () => {
  it('refuses no_outcome and makes no branch', () => {
    const f = runFixture();
    f.configure('fix-nothing');
    assert.equal(ordivon(f.dir, ...RUN).status, 1);
    const repo = seedRepo(f, 'repo');
    const r = ordivon(f.dir, 'apply', 'run-1', '--repo', repo, '--state', 'state');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /ordivon: no_outcome: task run-1 is waiting/);
    assert.equal(git(repo, 'branch', '--list', 'ordivon/*'), '');
    for (const args of [['diff'], ['export', '--to', join(f.dir, 'out')]]) {
      const other = ordivon(f.dir, args[0]!, 'run-1', ...args.slice(1), '--state', 'state');
      assert.equal(other.status, 1, args[0]);
      assert.match(other.stderr, /ordivon: no_outcome: /, args[0]);
    }
  });
});
