import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { EffectAdapter } from '../../frontier/effect-actions.js';
import { openHost, type Host } from '../../host/host.js';
import { OBJECT_KINDS, type EffectReceiptObject } from '../../objects/index.js';
import { EventStore, digestOf } from '../../store/index.js';
import { receiptsOf } from '../support/effect-task.js';
import { GIT_DAEMON, startGitRemote, type GitRemote } from '../support/git-daemon.js';
import {
  BRANCH,
  PUBLISH_HARNESSES,
  PUBLISH_INPUT,
  originAdapter,
  publishSeed,
  publishSpec,
} from '../support/publish-task.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';

// Review, then publication (docs/publication.md): a real Host on a real store, a real command
// agent choosing, a person's answer through the DecisionRequest, and the git adapter pushing to a
// real bare repository behind git daemon on loopback. Every push is counted by the remote's own
// post-receive hook.

const FIXTURE = fileURLToPath(new URL('../fixtures/publish/publish-host.js', import.meta.url));
const remotes: GitRemote[] = [];
const hosts: Host[] = [];
after(async () => {
  await Promise.all(hosts.map((h) => h.stop()));
  await Promise.all(remotes.map((r) => r.stop()));
});

async function remote(): Promise<GitRemote> {
  GIT_DAEMON.need();
  const r = await startGitRemote();
  remotes.push(r);
  return r;
}

async function host(state: string, origin: EffectAdapter): Promise<Host> {
  const h = await openHost({ state, harnesses: PUBLISH_HARNESSES, effectAdapters: { origin } });
  hosts.push(h);
  return h;
}

/** Creates the Task and has its agent choose `choice`; resolves once a person is asked. */
async function reviewed(h: Host, choice: 'publish' | 'hold'): Promise<string> {
  const { taskId } = await h.supervisor.createTask(publishSpec());
  const sent = await h.supervisor.send(taskId, {
    type: 'assignment.commit',
    harness: `pick-${choice}`,
    stage: 'review',
  });
  assert.equal(sent.admitted, true, JSON.stringify(sent));
  const state = await h.supervisor.waitFor(taskId, ['authorizing.held', 'waiting']);
  const events = h.supervisor.events(taskId).map((e) => [e.type, e.disposition, e.data]);
  assert.equal(state, 'authorizing.held', JSON.stringify(events));
  return taskId;
}

async function answer(h: Host, taskId: string, requestId: string, reply: 'approve' | 'refuse') {
  return h.supervisor.send(taskId, { type: 'request.answer', requestId, answer: reply, answeredBy: 'reviewer' });
}

/** The Task's events from the first `from` on, as `[type, code]` (`ok` for admitted ones). */
function journal(
  events: ReadonlyArray<{ type: string; disposition: { admitted: boolean } }>,
  from: string,
): string[][] {
  const start = events.findIndex((e) => e.type === from);
  if (start < 0) return [];
  return events
    .slice(start)
    .map((e) => [e.type, e.disposition.admitted ? 'ok' : (e.disposition as unknown as { code: string }).code]);
}

const commitOf = (receipt: EffectReceiptObject) => (receipt.receipt as { commit: string }).commit;

describe('review, then publication to a git remote (real Host, real git daemon)', { skip: GIT_DAEMON.skip }, () => {
  it('nothing reaches the remote before the review is admitted; approve publishes once, at the commit the receipt names', async () => {
    const r = await remote();
    const state = tempDir();
    const h = await host(state, originAdapter(state, r.url));
    const taskId = await reviewed(h, 'publish');
    const requestId = `${taskId}/a1/g1/authority`;
    // The agent chose publish; a person is asked. Nothing is intended, nothing pushed.
    assert.deepEqual(journal(h.supervisor.events(taskId), 'effect.intend'), []);
    assert.deepEqual([r.pushes(), r.head(BRANCH)], [[], null]);
    const request = h.supervisor.getTask(taskId)!.context.requests[requestId];
    assert.deepEqual([request?.about, request?.status], ['authority', 'pending']);

    const approved = await answer(h, taskId, requestId, 'approve');
    assert.equal(approved.admitted, true, JSON.stringify(approved));
    assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    assert.deepEqual(journal(h.supervisor.events(taskId), 'effect.intend'), [
      ['effect.intend', 'ok'],
      ['effect.record', 'ok'],
      ['evaluation.settle', 'ok'],
    ]);
    const [receipt] = receiptsOf(h, taskId);
    assert.equal(receipt?.via, 'perform');
    assert.deepEqual(r.pushes(), [`${'0'.repeat(40)} ${commitOf(receipt!)} refs/heads/${BRANCH}`]);
    assert.equal(r.head(BRANCH), commitOf(receipt!));
    assert.deepEqual(
      {
        ...(receipt!.receipt as object),
        commit: undefined,
        tree: undefined,
      },
      {
        remote: r.url,
        branch: BRANCH,
        commit: undefined,
        parent: null,
        tree: undefined,
        requestId: `${taskId}/a1/g1/effect`,
        inputDigest: digestOf(PUBLISH_INPUT),
      },
    );
  });

  it('refuse publishes nothing: the Task waits, no intent, the remote untouched', async () => {
    const r = await remote();
    const state = tempDir();
    const h = await host(state, originAdapter(state, r.url));
    const taskId = await reviewed(h, 'publish');
    const refused = await answer(h, taskId, `${taskId}/a1/g1/authority`, 'refuse');
    assert.equal(refused.admitted, true, JSON.stringify(refused));
    assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    assert.deepEqual(journal(h.supervisor.events(taskId), 'effect.intend'), []);
    assert.deepEqual([r.pushes(), r.head(BRANCH)], [[], null]);
  });

  it('a branch someone else moved while the review was pending is not overwritten: the approval is refused context_stale before any intent, the stage reruns on the new head, and a second approval publishes on top of it', async () => {
    const r = await remote();
    const state = tempDir();
    const h = await host(state, originAdapter(state, r.url));
    const taskId = await reviewed(h, 'publish');
    const theirs = r.pushAsOther(BRANCH, { 'THEIRS.md': 'theirs\n' });
    const late = await answer(h, taskId, `${taskId}/a1/g1/authority`, 'approve');
    assert.equal(late.admitted, true, JSON.stringify(late));
    assert.equal(await h.supervisor.waitFor(taskId, ['authorizing.held']), 'authorizing.held');
    const events = h.supervisor.events(taskId);
    assert.deepEqual(journal(events, 'effect.intend'), []);
    // The approval was admitted; the re-check before the intent found the branch moved, refused, and the stage reran.
    assert.deepEqual(journal(events, 'request.answer'), [
      ['request.answer', 'ok'],
      ['effect.refuse', 'context_stale'],
      ['assignment.commit', 'ok'],
      ['context.compile', 'ok'],
      ['dispatch.intend', 'ok'],
      ['dispatch.ack', 'ok'],
      ['run.observe', 'ok'],
      ['decision.submit', 'untrusted_authority'],
      ['request.open', 'ok'],
    ]);
    const refusal = events.find((e) => e.type === 'effect.refuse')!;
    assert.deepEqual(
      (refusal.data['stale'] as Array<{ sourceId: string }>).map((s) => s.sourceId),
      ['effect:publish/target'],
    );
    assert.deepEqual([r.pushes().length, r.head(BRANCH)], [1, theirs]);

    const approved = await answer(h, taskId, `${taskId}/a1/g2/authority`, 'approve');
    assert.equal(approved.admitted, true, JSON.stringify(approved));
    assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    const [receipt] = receiptsOf(h, taskId);
    assert.equal((receipt!.receipt as { parent: string }).parent, theirs);
    assert.equal(r.head(BRANCH), commitOf(receipt!));
    assert.equal(r.pushes().length, 2, "theirs, then the Task's, once");
  });

  it('the push answer lost (held past the adapter timeout): the Effect is unknown, the lookup finds the one commit, never pushed again', async () => {
    const r = await remote();
    const state = tempDir();
    const h = await host(state, originAdapter(state, r.url, 5000));
    const taskId = await reviewed(h, 'publish');
    r.hold();
    try {
      await answer(h, taskId, `${taskId}/a1/g1/authority`, 'approve');
      assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    } finally {
      r.release();
    }
    assert.deepEqual(journal(h.supervisor.events(taskId), 'effect.intend'), [
      ['effect.intend', 'ok'],
      ['effect.lost', 'ok'],
      ['effect.reconcile', 'ok'],
      ['evaluation.settle', 'ok'],
    ]);
    assert.equal(h.supervisor.getTask(taskId)!.context.effect?.status, 'recorded');
    const receipts = receiptsOf(h, taskId);
    assert.deepEqual(
      receipts.map((x) => x.via),
      ['lookup'],
    );
    assert.equal(r.head(BRANCH), commitOf(receipts[0]!));
    assert.equal(r.pushes().length, 1);
  });

  it('the Host SIGKILLed between the push and its record: a fresh Host finds the intent unanswered, looks it up, records it; one push', async () => {
    const r = await remote();
    const state = tempDir();
    const taskId = `publish-${randomUUID()}`;
    r.hold();
    const child = spawn(process.execPath, [FIXTURE, state, r.url, taskId, publishSeed()], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      // The remote took the update and its hook holds the answer: the Host has pushed, nothing recorded.
      await until('the push reached the remote', 60_000, async () => (r.pushes().length > 0 ? true : undefined));
    } catch (error) {
      throw new Error(`${(error as Error).message}; the Host's stderr: ${stderr}`);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
      r.release();
    }
    const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
    try {
      assert.equal(store.projection(taskId)?.state, 'effecting');
      assert.deepEqual(
        journal(
          [...store.stream(taskId)].map(({ event }) => event),
          'effect.intend',
        ),
        [['effect.intend', 'ok']],
      );
    } finally {
      await store.close();
    }

    const h = await host(state, originAdapter(state, r.url));
    assert.equal(await h.supervisor.waitFor(taskId, ['waiting']), 'waiting');
    assert.deepEqual(journal(h.supervisor.events(taskId), 'effect.intend'), [
      ['effect.intend', 'ok'],
      ['effect.lost', 'ok'],
      ['effect.reconcile', 'ok'],
      ['evaluation.settle', 'ok'],
    ]);
    const receipts = receiptsOf(h, taskId);
    assert.deepEqual(
      receipts.map((x) => [x.via, (x.receipt as { requestId: string }).requestId]),
      [['lookup', `${taskId}/a1/g1/effect`]],
    );
    assert.equal(r.head(BRANCH), commitOf(receipts[0]!));
    assert.deepEqual(r.pushes(), [`${'0'.repeat(40)} ${commitOf(receipts[0]!)} refs/heads/${BRANCH}`]);
  });
});
