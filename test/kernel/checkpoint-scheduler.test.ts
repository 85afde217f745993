import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialTransition } from 'xstate';
import { CheckpointScheduler } from '../../kernel/checkpoint-scheduler.js';
import { manualClock } from '../../kernel/clock.js';
import { newTask } from '../../kernel/new-task.js';
import { OBJECT_KINDS, type TaskSpec } from '../../objects/index.js';
import { readCheckpoints } from '../../recovery/index.js';
import { TaskActor, type Committed } from '../../kernel/task-actor.js';
import { taskMachine } from '../../machines/index.js';
import { EventStore } from '../../store/index.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

const TASK = 'task-checkpointed';

describe('CheckpointScheduler', () => {
  it('counts a checkpoint write that fails, and writes the Task at its next commit', async () => {
    const store = EventStore.open({ root: tempDir(), kinds: OBJECT_KINDS });
    const { spec, created, attachments } = newTask({ ...SPEC, taskId: TASK }, store);
    const specs = new Map<string, TaskSpec>();
    const scheduler = new CheckpointScheduler({ every: 2, store: () => store, specs });
    const [initial] = initialTransition(taskMachine);
    const task: TaskActor = new TaskActor({
      taskId: TASK,
      snapshot: initial,
      revision: 0,
      store,
      clock: manualClock(),
      onCommit: (c: Committed) => scheduler.committed(c, task),
    });
    const assign = async () => {
      const sent = await task.send({ type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' }, 'external');
      assert.equal(sent.admitted, true, JSON.stringify(sent));
      return sent.revision;
    };
    try {
      // A spec the write transaction cannot serialize stands in for a write LMDB refuses; the
      // checkpoint is taken at the commit (with the spec then) and written after it.
      specs.set(TASK, { ...spec, title: 10n } as unknown as TaskSpec);
      assert.equal((await task.send(created, 'host', attachments)).revision, 1);
      assert.equal(scheduler.stats().pending, 0, 'revision 1: not due yet');
      assert.equal(await assign(), 2);
      assert.equal(scheduler.stats().pending, 1, 'taken at the commit, written after the turn');
      await scheduler.written();
      const { lastFailure, ...counts } = scheduler.stats();
      assert.deepEqual(counts, { every: 2, written: 0, failed: 1, pending: 0 });
      assert.match(lastFailure ?? '', /BigInt/);
      assert.equal(scheduler.ledger.revision(store, TASK), 0, 'the failed write is not taken as written');
      assert.equal(readCheckpoints(store).has(TASK), false);

      specs.set(TASK, spec);
      assert.equal(await assign(), 3);
      await scheduler.written();
      assert.deepEqual(scheduler.stats(), { every: 2, written: 1, failed: 1, lastFailure, pending: 0 });
      assert.equal(scheduler.ledger.revision(store, TASK), 3);
      assert.equal((readCheckpoints(store).get(TASK) as { revision: number }).revision, 3);

      // Written at 3: the next is due at 5, and a clean stop writes the Task where it is.
      assert.equal(await assign(), 4);
      assert.equal(scheduler.stats().pending, 0);
      await scheduler.stop([task]);
      assert.equal(scheduler.stats().written, 2);
      assert.equal(scheduler.ledger.revision(store, TASK), 4);
    } finally {
      task.stop();
      await store.close();
    }
  });
});
