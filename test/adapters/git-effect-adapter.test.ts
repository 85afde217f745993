import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  GIT_EFFECT_CODES,
  GitEffectError,
  gitEffectAdapter,
  type GitEffectAdapterConfig,
  type GitPublishReceipt,
} from '../../adapters/index.js';
import { digestOf } from '../../store/index.js';
import { DOCUMENTED_CODES } from '../reliability/documented-codes.js';
import { GIT_DAEMON, gitSync, startGitRemote, type GitRemote } from '../support/git-daemon.js';
import { rejectsWith } from '../support/rejects-with.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';

// The git Effect adapter against a real bare repository served by `git daemon` on loopback. Every
// push count is read from the remote's own post-receive hook.

const remotes: GitRemote[] = [];
after(() => Promise.all(remotes.map((r) => r.stop())));

async function remote(): Promise<GitRemote> {
  GIT_DAEMON.need();
  const r = await startGitRemote();
  remotes.push(r);
  return r;
}

/** A workspace with a few files, one of them junk (node_modules) and one an artifact to leave out. */
function workspace(): string {
  const dir = tempDir('ordivon-git-ws-');
  writeFileSync(join(dir, 'README.md'), '# Published\n');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'main.js'), 'export const answer = 42;\n');
  mkdirSync(join(dir, 'node_modules'));
  writeFileSync(join(dir, 'node_modules', 'junk.js'), 'junk\n');
  writeFileSync(join(dir, 'choice.json'), '{}\n');
  return dir;
}

function adapter(url: string, dir: string, extra: Partial<GitEffectAdapterConfig> = {}) {
  return gitEffectAdapter({ remote: url, workspace: () => dir, ...extra });
}

const PUBLISH = { operation: 'publish', target: 'review/t-1' };
const INPUT = { message: 'Publish the reviewed change', exclude: ['choice.json'] };

/** The files of `commit` in the bare repository. */
function filesOf(r: GitRemote, commit: string): string[] {
  return gitSync(['--git-dir', r.dir, 'ls-tree', '-r', '--name-only', commit]).trim().split('\n');
}

describe('the git Effect adapter (a real bare repository behind git daemon)', { skip: GIT_DAEMON.skip }, () => {
  it('publishes once: the branch is at the commit the receipt names, with the request id in its trailer and the parent expected', async () => {
    const r = await remote();
    const ws = workspace();
    const a = adapter(r.url, ws);
    assert.deepEqual(await a.observe(PUBLISH), {
      endpointIdentity: r.url,
      targetVersion: null,
      capabilities: { idempotency: 'key', lookup: true, lookupWindowMs: null },
    });
    const receipt = await a.perform('t-1/a1/g1/effect', INPUT, { ...PUBLISH, targetVersion: null });
    assert.equal(r.head('review/t-1'), receipt.commit);
    assert.deepEqual(r.pushes(), [`${'0'.repeat(40)} ${receipt.commit} refs/heads/review/t-1`]);
    assert.deepEqual(
      [receipt.parent, receipt.branch, receipt.requestId, receipt.inputDigest],
      [null, 'review/t-1', 't-1/a1/g1/effect', digestOf(INPUT)],
    );
    assert.deepEqual(filesOf(r, receipt.commit), ['README.md', 'src/main.js']);
    const message = gitSync(['--git-dir', r.dir, 'log', '-1', '--format=%B', receipt.commit]);
    assert.match(message, /^Publish the reviewed change\n\nOrdivon-Task: t-1\nOrdivon-Request: t-1\/a1\/g1\/effect\n/);
    assert.equal((await a.observe(PUBLISH)).targetVersion, receipt.commit);
    assert.equal(a.receiptInputDigest(receipt), digestOf(INPUT));

    // The lookup finds the one commit under the request id, as perform answered it; nothing under another id.
    assert.deepEqual(await a.lookup('t-1/a1/g1/effect', PUBLISH), [receipt]);
    assert.deepEqual(await a.lookup('t-1/a1/g2/effect', PUBLISH), []);
    assert.deepEqual(await a.lookup('t-1/a1/g1/effect', { ...PUBLISH, target: 'review/absent' }), []);

    // The next publication on the branch has the first as its parent; the lookup still finds both.
    writeFileSync(join(ws, 'README.md'), '# Published, twice\n');
    const second = await a.perform('t-1/a1/g3/effect', INPUT, { ...PUBLISH, targetVersion: receipt.commit });
    assert.equal(second.parent, receipt.commit);
    assert.equal(r.head('review/t-1'), second.commit);
    assert.deepEqual(await a.lookup('t-1/a1/g1/effect', PUBLISH), [receipt]);
    assert.deepEqual(await a.lookup('t-1/a1/g3/effect', PUBLISH), [second]);
    assert.equal(r.pushes().length, 2);
  });

  it('is deterministic: the same request, input, workspace and head give the same commit id on another remote', async () => {
    const [r1, r2] = [await remote(), await remote()];
    const ws = workspace();
    const one = await adapter(r1.url, ws).perform('t-2/a1/g1/effect', INPUT, { ...PUBLISH, targetVersion: null });
    const two = await adapter(r2.url, ws).perform('t-2/a1/g1/effect', INPUT, { ...PUBLISH, targetVersion: null });
    assert.equal(one.commit, two.commit);
    const other = await adapter(r2.url, ws).perform('t-2/a1/g2/effect', INPUT, {
      ...PUBLISH,
      target: 'review/other',
      targetVersion: null,
    });
    assert.notEqual(other.commit, one.commit, 'another request id is another commit');
  });

  it('a moved branch is refused, not overwritten: git_effect_branch_moved, nothing pushed (absent expected, or another head)', async () => {
    const r = await remote();
    const a = adapter(r.url, workspace());
    const theirs = r.pushAsOther('review/t-1', { 'THEIRS.md': 'theirs\n' });
    const absentExpected = await rejectsWith(
      a.perform('t-3/a1/g1/effect', INPUT, { ...PUBLISH, targetVersion: null }),
      GitEffectError,
      'git_effect_branch_moved',
    );
    assert.equal(a.notPerformed(absentExpected), true);
    const older = 'f'.repeat(40);
    await rejectsWith(
      a.perform('t-3/a1/g2/effect', INPUT, { ...PUBLISH, targetVersion: older }),
      GitEffectError,
      'git_effect_branch_moved',
    );
    assert.equal(r.head('review/t-1'), theirs);
    assert.equal(r.pushes().length, 1, "only the other client's push");
  });

  it("the push's lease refuses a branch that moved after it was read: git_effect_branch_moved from the push itself, nothing overwritten", async () => {
    // Reads go to one remote, the push (pushInsteadOf, through the config's env) to another whose
    // branch exists: the read finds it absent as the intent expects, and only the lease can refuse.
    const [read, pushed] = [await remote(), await remote()];
    const theirs = pushed.pushAsOther('review/t-1', { 'THEIRS.md': 'theirs\n' });
    const a = adapter(read.url, workspace(), {
      env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: `url.${pushed.url}.pushInsteadOf`, GIT_CONFIG_VALUE_0: read.url },
    });
    const refused = await rejectsWith(
      a.perform('t-6/a1/g1/effect', INPUT, { ...PUBLISH, targetVersion: null }),
      GitEffectError,
      'git_effect_branch_moved',
    );
    assert.match(refused.message, /was rejected: .*stale info/);
    assert.equal(a.notPerformed(refused), true);
    assert.deepEqual([pushed.head('review/t-1'), pushed.pushes().length, read.pushes()], [theirs, 1, []]);
  });

  it('a push the remote declines (a pre-receive hook) is git_effect_refused: nothing pushed', async () => {
    const r = await remote();
    const hook = join(r.dir, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "review/* is protected" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const a = adapter(r.url, workspace());
    const refused = await rejectsWith(
      a.perform('t-7/a1/g1/effect', INPUT, { ...PUBLISH, targetVersion: null }),
      GitEffectError,
      'git_effect_refused',
    );
    assert.match(refused.message, /pre-receive hook declined/);
    assert.equal(a.notPerformed(refused), true);
    assert.deepEqual([r.head('review/t-1'), r.pushes()], [null, []]);
  });

  it('an answer lost after the update (the push held past timeoutMs) is git_effect_no_answer, and the lookup finds the one commit', async () => {
    const r = await remote();
    const a = adapter(r.url, workspace(), { timeoutMs: 5000 });
    r.hold();
    const lost = await rejectsWith(
      a.perform('t-4/a1/g1/effect', INPUT, { ...PUBLISH, targetVersion: null }),
      GitEffectError,
      'git_effect_no_answer',
    );
    assert.equal(a.notPerformed(lost), false);
    r.release();
    const head = await until('the branch updated', 10_000, async () => r.head('review/t-1') ?? undefined);
    const found = await a.lookup('t-4/a1/g1/effect', PUBLISH);
    assert.deepEqual(
      found.map((f: GitPublishReceipt) => [f.commit, f.parent, f.inputDigest]),
      [[head, null, digestOf(INPUT)]],
    );
    assert.equal(r.pushes().length, 1);
  });

  it('refusals before anything is sent: unreachable remote, another operation, a bad branch, bad input, no workspace', async () => {
    const ws = workspace();
    const down = adapter('git://127.0.0.1:9/none.git', ws, { timeoutMs: 5000 });
    const unreachable = await rejectsWith(
      down.perform('t-5/a1/g1/effect', INPUT, PUBLISH),
      GitEffectError,
      'git_effect_unreachable',
    );
    assert.equal(down.notPerformed(unreachable), true);
    await rejectsWith(down.observe(PUBLISH), GitEffectError, 'git_effect_lookup_failed');
    await rejectsWith(down.lookup('t-5/a1/g1/effect', PUBLISH), GitEffectError, 'git_effect_lookup_failed');
    const r = await remote();
    const a = adapter(r.url, ws);
    await rejectsWith(
      a.perform('t-5/a1/g1/effect', INPUT, { operation: 'delete', target: 'main' }),
      GitEffectError,
      'git_effect_operation_unknown',
    );
    for (const target of ['bad..name', '-x', 'a b', 'x.lock', 'end/'])
      await rejectsWith(
        a.perform('t-5/a1/g1/effect', INPUT, { ...PUBLISH, target }),
        GitEffectError,
        'git_effect_invalid_input',
      );
    const input = await rejectsWith(
      a.perform('t-5/a1/g1/effect', { ...INPUT, force: true }, PUBLISH),
      GitEffectError,
      'git_effect_invalid_input',
    );
    assert.equal(a.notPerformed(input), true);
    await rejectsWith(a.perform('not-an-effect-id', INPUT, PUBLISH), GitEffectError, 'git_effect_invalid_input');
    await rejectsWith(
      adapter(r.url, join(ws, 'absent')).perform('t-5/a1/g1/effect', INPUT, PUBLISH),
      GitEffectError,
      'git_effect_invalid_input',
    );
    assert.deepEqual(r.pushes(), []);
  });

  it('a config that does not parse is git_effect_config_invalid naming the field', () => {
    assert.throws(
      () => gitEffectAdapter({ remote: '', workspace: () => '/' }),
      (e: unknown) => e instanceof GitEffectError && e.code === 'git_effect_config_invalid' && e.path === 'remote',
    );
    assert.throws(
      () => gitEffectAdapter({ remote: 'x', workspace: () => '/', lookupDepth: 0 }),
      (e: unknown) => e instanceof GitEffectError && e.code === 'git_effect_config_invalid' && e.path === 'lookupDepth',
    );
  });

  it('documents every git adapter code in the error table (docs/errors.md)', () => {
    assert.deepEqual(
      Object.keys(GIT_EFFECT_CODES).filter((code) => !DOCUMENTED_CODES.has(code)),
      [],
    );
  });
});
