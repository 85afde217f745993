import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { DecisionRequestObject, OBJECT_KINDS, ReadSetContext } from '../../objects/index.js';
import { EventStore } from '../../store/index.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { permissionAgent } from '../support/permission-agent.js';

// The whole path on real parts: the Host (real store, Runtime, driver pool worker threads) runs a
// scripted ACP agent (the official SDK, a child process) that asks to edit a file outside its
// workspace, three Assignments in a row, under the default policy.

/** What the Task's journal and Contexts hold, read back from the durable state after the Host stopped. */
function readBack(state: string, taskId: string) {
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  try {
    const events = [...store.stream(taskId)].map(({ event }) => ({
      type: event.type,
      data: event.data as Record<string, unknown>,
    }));
    const opened = events.filter((e) => e.type === 'request.open').map((e) => e.data['requestId']);
    const requests = opened.map((id) => {
      const open = events.find((e) => e.type === 'request.open' && e.data['requestId'] === id)!;
      return DecisionRequestObject.parse(store.getObject(String(open.data['requestDigest']), 'decision-request').body);
    });
    const contexts = events
      .filter((e) => e.type === 'context.compile')
      .map((e) => ({
        body: ReadSetContext.parse(store.getObject(String(e.data['contextDigest']), 'context').body),
        prompt: store.getObject<{ text: string }>(String(e.data['promptDigest']), 'prompt').body.text,
      }));
    return { opened, requests, contexts };
  } finally {
    void store.close();
  }
}

describe('an escalated provider permission request becomes one DecisionRequest, and its allow the next run’s grant', () => {
  it('asks once across replays, survives the next Assignment, and after allow the next Context shows the grant and its run is allowed', async () => {
    const state = tempDir();
    const trace = join(tempDir(), 'agent-trace.jsonl');
    const agent = permissionAgent(trace);
    const host = await openHost({ state, harnesses: { agent } });
    const sup = host.supervisor;
    const taskId = 't-perm';
    const runOnce = async () => {
      await sup.send(taskId, { type: 'assignment.commit', harness: 'agent', stage: 'work' });
      assert.equal(await sup.waitFor(taskId, ['waiting']), 'waiting');
    };
    let requestId: string;
    try {
      await sup.createTask({ ...SPEC, taskId });
      await runOnce();
      const requests = Object.entries(sup.getTask(taskId)!.context.requests);
      assert.equal(requests.length, 1);
      const [id, held] = requests[0]!;
      requestId = id;
      assert.match(requestId, /^t-perm\/permission\/perm-[0-9a-f]{20}$/);
      assert.deepEqual([held.about, held.status, held.contextDigest], ['permission', 'pending', null]);

      // The same request, asked again by the next Assignment's run: the same id, not a second request.
      await runOnce();
      const after2 = sup.getTask(taskId)!.context;
      assert.deepEqual(Object.keys(after2.requests), [requestId]);
      assert.equal(after2.requests[requestId]!.status, 'pending');

      const answered = await sup.send(taskId, { type: 'request.answer', requestId, answer: 'allow' });
      assert.equal(answered.written, true, JSON.stringify(answered));
      await runOnce();
      assert.equal(sup.getTask(taskId)!.context.generation, 3);
    } finally {
      await host.stop();
    }

    const outcomes = readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; outcome?: string })
      .filter((e) => e.event === 'permission')
      .map((e) => e.outcome);
    assert.deepEqual(outcomes, ['deny', 'deny', 'allow']);

    const { opened, requests, contexts } = readBack(state, taskId);
    assert.deepEqual(opened, [requestId]);
    const request = requests[0]!;
    assert.equal(request.about, 'permission');
    assert.deepEqual(request.allowed, ['allow', 'refuse']);
    assert.equal(request.contextDigest, null);
    assert.equal(request.participant, 'operator');
    assert.match(request.pendingAction, /^edit .*shared\/settings\.json$/);
    assert.equal(request.reversibility, 'unknown');
    assert.deepEqual(request.permission?.['reason'], 'not_private');
    assert.ok(request.evidence.some((line) => /ownership shared/.test(line)));

    assert.equal(contexts.length, 3);
    assert.deepEqual(
      contexts.map((c) => c.body.grants?.map((g) => g.requestId)),
      [undefined, undefined, [requestId]],
    );
    assert.match(contexts[2]!.prompt, /Granted by operator: edit .*shared\/settings\.json \(t-perm\/permission\/perm-/);
    assert.doesNotMatch(contexts[1]!.prompt, /Granted by/);
  });
});
