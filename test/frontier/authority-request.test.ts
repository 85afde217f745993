import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { workspacePath } from '../../runtime/index.js';
import { DecisionRequestObject, OBJECT_KINDS, type TaskSpecInput } from '../../objects/index.js';
import { EventStore } from '../../store/index.js';
import { DECISION_HARNESSES, POLICY_2, decisionSpec, decisionWorld } from '../support/decision-task.js';
import { tempDir } from '../support/temp.js';

/**
 * A decision stage with `untrustedAuthority: "ask"`: a candidate resting on an untrusted source is
 * retained `untrusted_authority` as before, and then put to a person as a DecisionRequest naming
 * that source instead of left refused. Real Tasks: a Host on LMDB, the agent a child process.
 */

/** The decision spec whose choose stage asks, accepted when the stripped-checks candidate was performed. */
function askingSpec(dirs: { world: string; seed: string }): TaskSpecInput {
  const spec = decisionSpec(dirs, { survey: false });
  const stages = spec.stages!.map((s) =>
    s.decision ? { ...s, decision: { ...s.decision, untrustedAuthority: 'ask' as const } } : s,
  );
  const check = "process.exit(require('fs').existsSync('stripped.txt') ? 0 : 1)";
  return { ...spec, stages, acceptance: { command: process.execPath, args: ['-e', check], timeoutMs: 30_000 } };
}

/** A Host with the asking Task, its choose stage run by the agent that picks `strip-checks`: held for an answer. */
async function asked() {
  const state = tempDir();
  const dirs = decisionWorld();
  const host = await openHost({ state, harnesses: DECISION_HARNESSES });
  const { taskId } = await host.supervisor.createTask(askingSpec(dirs));
  await host.supervisor.send(taskId, { type: 'assignment.commit', harness: 'pick-strip-checks', stage: 'choose' });
  assert.equal(await host.supervisor.waitFor(taskId, ['authorizing.held', 'waiting']), 'authorizing.held');
  const [requestId] = Object.keys(host.supervisor.getTask(taskId)!.context.requests);
  return { state, dirs, host, taskId, requestId: requestId! };
}

/** The Task's decision and answer events and the request objects, read back after the Host stopped. */
function readBack(state: string, taskId: string) {
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  try {
    const events = [...store.stream(taskId)].map(({ event }) => ({
      type: event.type,
      code: event.disposition.admitted ? undefined : event.disposition.code,
      data: event.data as Record<string, unknown>,
    }));
    const requests = events
      .filter((e) => e.type === 'request.open')
      .map((e) =>
        DecisionRequestObject.parse(store.getObject(String(e.data['requestDigest']), 'decision-request').body),
      );
    return { events, requests };
  } finally {
    void store.close();
  }
}

describe('untrustedAuthority "ask": an untrusted candidate is put to a person', () => {
  it('the request names the candidate and its untrusted source; approve performs it and the Task completes', async () => {
    const { state, host, taskId, requestId } = await asked();
    try {
      assert.equal(requestId, `${taskId}/a1/g1/authority`);
      const answered = await host.supervisor.send(taskId, {
        type: 'request.answer',
        requestId,
        answer: 'approve',
        answeredBy: 'maintainer',
      });
      assert.deepEqual([answered.admitted, answered.code], [true, undefined]);
      assert.equal(await host.supervisor.waitFor(taskId, ['completed', 'waiting']), 'completed');
    } finally {
      await host.stop();
    }
    const { events, requests } = readBack(state, taskId);
    assert.deepEqual(
      requests.map((r) => [r.about, r.candidate, r.allowed]),
      [
        [
          'authority',
          { id: 'strip-checks', untrustedSources: [{ sourceId: 'notes', trust: 'untrusted' }] },
          ['approve', 'refuse'],
        ],
      ],
    );
    assert.match(requests[0]!.pendingAction, /strip-checks/);
    assert.deepEqual(
      events.filter((e) => e.type === 'decision.submit').map((e) => [e.code, e.data['authority'], e.data['ask']]),
      [['untrusted_authority', 'untrusted', true]],
      'the provider’s choice is retained as refused; the answer, not the choice, gave it authority',
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'action.record').map((e) => [e.data['candidateId'], e.data['ok']]),
      [['strip-checks', true]],
    );
    assert.ok(existsSync(join(workspacePath(join(state, 'workspaces'), taskId, 1), 'stripped.txt')));
  });

  it('refuse performs nothing and the Task waits; an answer that is not allowed is refused and the request stays', async () => {
    const { state, host, taskId, requestId } = await asked();
    try {
      const odd = await host.supervisor.send(taskId, {
        type: 'request.answer',
        requestId,
        answer: 'maybe',
        answeredBy: 'maintainer',
      });
      assert.deepEqual([odd.written, odd.admitted, odd.code], [true, false, 'answer_not_allowed']);
      assert.equal(host.supervisor.taskActor(taskId)!.state, 'authorizing.held');
      const refused = await host.supervisor.send(taskId, {
        type: 'request.answer',
        requestId,
        answer: 'refuse',
        answeredBy: 'maintainer',
      });
      assert.equal(refused.admitted, true);
      assert.equal(await host.supervisor.waitFor(taskId, ['waiting']), 'waiting');
      assert.deepEqual(
        [host.supervisor.getTask(taskId)!.context.decision, host.supervisor.getTask(taskId)!.context.asked],
        [null, null],
      );
    } finally {
      await host.stop();
    }
    const { events } = readBack(state, taskId);
    assert.deepEqual(
      events.filter((e) => e.type === 'action.record'),
      [],
    );
    assert.equal(existsSync(join(workspacePath(join(state, 'workspaces'), taskId, 1), 'stripped.txt')), false);
  });

  it('an approval after a trusted source moved is decision_stale: nothing performed, the stage reruns and asks again', async () => {
    const { state, dirs, host, taskId, requestId } = await asked();
    try {
      writeFileSync(join(dirs.world, 'POLICY.md'), POLICY_2);
      const late = await host.supervisor.send(taskId, {
        type: 'request.answer',
        requestId,
        answer: 'approve',
        answeredBy: 'maintainer',
      });
      assert.deepEqual([late.written, late.admitted, late.code], [true, false, 'decision_stale']);
      // The rerun (generation 2) chooses the same candidate on the current policy and is asked again.
      const again = `${taskId}/a1/g2/authority`;
      await host.supervisor.waitFor(taskId, ['authorizing.held']);
      assert.equal(host.supervisor.getTask(taskId)!.context.requests[again]?.status, 'pending');
      assert.equal(host.supervisor.getTask(taskId)!.context.requests[requestId]?.status, 'revoked');
    } finally {
      await host.stop();
    }
    const { events } = readBack(state, taskId);
    assert.deepEqual(
      events.filter((e) => e.type === 'action.record'),
      [],
    );
  });

  it('a Host restarted right after the choice was retained ends with one request, never two', async () => {
    const state = tempDir();
    const dirs = decisionWorld();
    let taskId = '';
    const first = await openHost({ state, harnesses: DECISION_HARNESSES });
    try {
      taskId = (await first.supervisor.createTask(askingSpec(dirs))).taskId;
      // Stop as soon as the choice is retained: the request is the next step, and it is not taken yet.
      const stopped = new Promise<void>((resolve) => {
        const off = first.supervisor.subscribe((c) => {
          if (c.taskId === taskId && c.type === 'decision.submit') {
            off();
            resolve();
          }
        });
      });
      await first.supervisor.send(taskId, { type: 'assignment.commit', harness: 'pick-strip-checks', stage: 'choose' });
      await stopped;
    } finally {
      await first.stop();
    }
    const second = await openHost({ state, harnesses: DECISION_HARNESSES });
    try {
      assert.equal(await second.supervisor.waitFor(taskId, ['authorizing.held']), 'authorizing.held');
    } finally {
      await second.stop();
    }
    assert.deepEqual(
      readBack(state, taskId).requests.map((r) => r.requestId),
      [`${taskId}/a1/g1/authority`],
    );
  });
});
