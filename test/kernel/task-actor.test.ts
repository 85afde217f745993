import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialTransition } from 'xstate';
import { manualClock } from '../../kernel/clock.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { TaskActor, type TaskSnapshot } from '../../kernel/task-actor.js';
import { seededRandom } from '../../bench/util.js';
import { materialize, type StepKind } from '../../bench/workload.js';
import { TASK_EVENT_REFS, TaskEvent, refsOf, taskMachine } from '../../machines/index.js';
import { EventStore } from '../../store/index.js';
import { tempDir } from '../support/temp.js';

async function drive(actor: TaskActor, kinds: StepKind[], random = seededRandom(5)): Promise<void> {
  for (const kind of kinds) {
    const step = materialize(kind, actor.taskId, actor.context, random);
    const result = await actor.send(step.event, step.origin, step.attachments);
    assert.equal(result.admitted, true, `${kind}: ${JSON.stringify(result)}`);
  }
}

/** A Task's kernel at revision 0 on `store`, its commits heard by nobody. */
function freshActor(taskId: string, initial: TaskSnapshot, store: EventStore): TaskActor {
  return new TaskActor({ taskId, snapshot: initial, revision: 0, store, clock: manualClock(), onCommit: () => {} });
}

describe('TaskActor kernel', () => {
  it('after an append the store refuses (identity_conflict), takes the next event from the committed state, not the refused one', async () => {
    const store = EventStore.open({ root: tempDir(), kinds: OBJECT_KINDS });
    const [initial] = initialTransition(taskMachine);
    const a = freshActor('task-a', initial, store);
    const b = freshActor('task-b', initial, store);
    try {
      await drive(a, ['created', 'assign', 'compile']);
      await drive(b, ['created', 'assign', 'compile']);
      const taken = await b.send({ type: 'dispatch.intend', generation: 1, clientRequestId: 'shared-request' }, 'host');
      assert.equal(taken.admitted, true);

      const before = { revision: a.revision, state: a.state, persisted: JSON.stringify(a.persistedSnapshot()) };
      const refused = await a.send(
        { type: 'dispatch.intend', generation: 1, clientRequestId: 'shared-request' },
        'host',
      );
      assert.deepEqual([refused.admitted, refused.written, refused.code], [false, false, 'identity_conflict']);
      assert.deepEqual(
        { revision: a.revision, state: a.state, persisted: JSON.stringify(a.persistedSnapshot()) },
        before,
      );
      assert.equal(store.head('task-a')?.revision, before.revision);

      // The statechart takes dispatch.intend only where task-a still is; had the refused event
      // stayed on the kernel's actor, this would be refused as invalid_transition.
      const retried = await a.send({ type: 'dispatch.intend', generation: 1, clientRequestId: 'own-request' }, 'host');
      assert.deepEqual([retried.admitted, retried.written, retried.revision], [true, true, before.revision + 1]);
      assert.equal(store.projection('task-a')?.state, a.state);
      assert.deepEqual(store.projection('task-a')?.snapshot, a.persistedSnapshot());
    } finally {
      a.stop();
      b.stop();
      await store.close();
    }
  });

  it('refuses an event the state does not take without writing, and the observed actor hears only commits', async () => {
    const store = EventStore.open({ root: tempDir(), kinds: OBJECT_KINDS });
    const [initial] = initialTransition(taskMachine);
    const a = freshActor('task-a', initial, store);
    try {
      await drive(a, ['created']);
      const seen: string[] = [];
      a.actor.subscribe((snapshot) => seen.push(JSON.stringify(snapshot.value)));
      const refused = await a.send({ type: 'dispatch.ack', clientRequestId: 'nothing', jobId: 'job-1' }, 'host');
      assert.deepEqual([refused.admitted, refused.written, refused.code], [false, false, 'invalid_transition']);
      assert.equal(store.head('task-a')?.revision, 1);
      await drive(a, ['assign']);
      assert.deepEqual(a.actor.getSnapshot().value, a.persistedSnapshot().value);
      assert.deepEqual(seen, [JSON.stringify(a.persistedSnapshot().value)]);
    } finally {
      a.stop();
      await store.close();
    }
  });

  it("stores events that the machine's own schema takes, each ref an object of the kind its definition names", async () => {
    const store = EventStore.open({ root: tempDir(), kinds: OBJECT_KINDS });
    const [initial] = initialTransition(taskMachine);
    const walks: Array<[string, StepKind[]]> = [
      ['task-done', ['created', 'assign', 'compile', 'intend', 'ack', 'observeFull', 'proposeFull', 'verifyPass']],
      ['task-lost', ['created', 'assign', 'compile', 'intend', 'lost', 'reconcile', 'observe', 'settle', 'cancel']],
    ];
    try {
      const seen = new Set<string>();
      for (const [taskId, kinds] of walks) {
        const actor = new TaskActor({
          taskId,
          snapshot: initial,
          revision: 0,
          store,
          clock: manualClock(),
          onCommit: () => {},
        });
        await drive(actor, kinds);
        actor.stop();
        for (const { revision, event: record } of store.stream(taskId)) {
          const parsed = TaskEvent.safeParse({ ...record.data, type: record.type, revision, origin: record.origin });
          assert.ok(parsed.success, `${record.type}: ${JSON.stringify(parsed.error?.issues)}`);
          assert.deepEqual(record.refs, refsOf(parsed.data));
          seen.add(record.type);
          for (const { field, kind } of TASK_EVENT_REFS[parsed.data.type]) {
            const value: unknown = (parsed.data as Record<string, unknown>)[field];
            const digests =
              typeof value === 'string' ? [value] : Object.values((value ?? {}) as Record<string, string>);
            for (const digest of digests) {
              if (kind === 'blob') assert.equal((store.storedDigest(digest) as { in: string }).in, 'blob', field);
              else assert.equal(store.getObject(digest).kind, kind, `${record.type}.${field}`);
            }
          }
        }
      }
      assert.equal(seen.size, 12);
    } finally {
      await store.close();
    }
  });
});
