import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GIT_DAEMON, gitSync, startGitRemote, type GitRemote } from '../support/git-daemon.js';
import { BRANCH, PUBLISH_HARNESSES, publishSpec } from '../support/publish-task.js';
import { tempDir } from '../support/temp.js';
import { ordivon } from './run-fixture.js';

// The review-then-publish Task of docs/publication.md driven from the command line: the git
// adapter is named in ordivon.config.json (`effects`), `ordivon run` stops at the person's
// question, `ordivon decide` answers it, and the next `ordivon run` publishes, once.

const remotes: GitRemote[] = [];
after(async () => {
  await Promise.all(remotes.map((r) => r.stop()));
});

describe('publication configured in ordivon.config.json', { timeout: 120_000 }, () => {
  it(
    'ordivon run asks, ordivon decide approves, the next ordivon run publishes the branch once',
    { skip: GIT_DAEMON.skip },
    async () => {
      const remote = await startGitRemote();
      remotes.push(remote);
      const dir = tempDir('ordivon-publish-cli-');
      writeFileSync(join(dir, 'spec.json'), JSON.stringify(publishSpec('pub-1')));
      writeFileSync(
        join(dir, 'ordivon.config.json'),
        JSON.stringify({ harnesses: PUBLISH_HARNESSES, effects: { origin: { kind: 'git', remote: remote.url } } }),
      );
      const run = () =>
        ordivon(dir, 'run', '--spec', 'spec.json', '--stages', 'review=pick-publish', '--state', 'state', '--quiet');

      const asked = run();
      assert.equal(asked.status, 1, asked.stderr);
      const requestId = 'pub-1/a1/g1/authority';
      assert.match(asked.stderr, new RegExp(`pending DecisionRequest ${requestId}`));
      assert.deepEqual(remote.pushes(), [], 'nothing reaches the remote before the review admits it');

      const decided = ordivon(dir, 'decide', 'pub-1', requestId, '--answer', 'approve', '--state', 'state');
      assert.equal(decided.status, 0, decided.stderr);
      assert.deepEqual(remote.pushes(), [], 'the answer alone publishes nothing: the Host acts when it runs');

      // The stage ends waiting after its action (it proposes no completion): not completed, but published.
      const published = run();
      assert.notEqual(published.status, 2, published.stderr);
      assert.equal(remote.pushes().length, 1, 'one push');
      const head = gitSync(['ls-remote', remote.url, `refs/heads/${BRANCH}`]).split('\t')[0];
      const shown = ordivon(dir, 'show', 'pub-1', '--state', 'state', '--json').json() as {
        effects: Array<{ event: string; requestId: string; via: string }>;
      };
      assert.deepEqual(
        shown.effects.map((e) => [e.event, e.requestId, e.via]),
        [['effect.record', 'pub-1/a1/g1/effect', 'perform']],
      );
      assert.ok(head && /^[0-9a-f]{40}$/.test(head), head);
      // Run again: the Effect is recorded, nothing is pushed twice.
      run();
      assert.equal(remote.pushes().length, 1);
    },
  );

  it('refuses an effects entry that is not a git adapter: invalid_config at its field, exit 2', () => {
    const dir = tempDir('ordivon-publish-cli-');
    writeFileSync(join(dir, 'spec.json'), JSON.stringify(publishSpec('pub-2')));
    writeFileSync(
      join(dir, 'ordivon.config.json'),
      JSON.stringify({ harnesses: PUBLISH_HARNESSES, effects: { origin: { kind: 'svn', remote: 'x' } } }),
    );
    const r = ordivon(
      dir,
      'run',
      '--spec',
      'spec.json',
      '--stages',
      'review=pick-publish',
      '--state',
      'state',
      '--json',
    );
    assert.equal(r.status, 2, r.stderr);
    assert.deepEqual([r.error().code, r.error().path], ['invalid_config', 'effects.origin.kind']);
  });
});
