import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialTransition } from 'xstate';
import { manualClock } from '../../kernel/clock.js';
import type { FrontierRunner } from '../../kernel/frontier-runner.js';
import { FRONTIER_RETRY_MS, FrontierScheduler } from '../../kernel/frontier-scheduler.js';
import { newTask } from '../../kernel/new-task.js';
import { OBJECT_KINDS, type TaskSpec } from '../../objects/index.js';
import { TaskActor, type Committed } from '../../kernel/task-actor.js';
import { taskMachine, type FrontierWork } from '../../machines/index.js';
import { EventStore, digestOf } from '../../store/index.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

/** A promise and the function that resolves it. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A created Task on a real store, its commits passed to `onCommit` (set later). */
async function createdTask(taskId: string) {
  const store = EventStore.open({ root: tempDir(), kinds: OBJECT_KINDS });
  const { spec, created, attachments } = newTask({ ...SPEC, taskId }, store);
  const hooks = { onCommit: (_: Committed) => {} };
  const [initial] = initialTransition(taskMachine);
  const task = new TaskActor({
    taskId,
    snapshot: initial,
    revision: 0,
    store,
    clock: manualClock(),
    onCommit: (c) => hooks.onCommit(c),
  });
  assert.equal((await task.send(created, 'host', attachments)).admitted, true);
  return { store, task, specs: new Map<string, TaskSpec>([[taskId, spec]]), hooks };
}

describe('FrontierScheduler', () => {
  it('runs one piece of frontier work per Task at a time: kicks and commits while it is in flight start nothing, the next piece starts once it moved the Task on', async () => {
    const { store, task, specs, hooks } = await createdTask('task-frontier');
    const calls: FrontierWork[] = [];
    let running = 0;
    let most = 0;
    const started = [deferred(), deferred()];
    const compiled = deferred();
    const dispatchDone = deferred();
    const effects: FrontierRunner = {
      async perform(handle, work) {
        calls.push(work);
        most = Math.max(most, ++running);
        started[calls.length - 1]?.resolve();
        try {
          if (work === 'compile_context') {
            await compiled.promise;
            const body = { taskId: handle.taskId, generation: 1, sources: [], prompt: 'generation 1' };
            const contextDigest = digestOf({ kind: 'context', body });
            const sent = await handle.send(
              { type: 'context.compile', generation: 1, contextDigest },
              { objects: [{ kind: 'context', body }] },
            );
            // Heard while this work is still in flight: the kick that commit queues starts nothing.
            assert.equal(sent.admitted, true);
          } else {
            await dispatchDone.promise; // commits nothing: not retried in a loop
          }
        } finally {
          running--;
        }
      },
    };
    const scheduler = new FrontierScheduler({ frontier: effects, serving: () => true, store: () => store, specs });
    hooks.onCommit = () => scheduler.committed(task);
    try {
      const assigned = await task.send(
        { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' },
        'external',
      );
      assert.equal(assigned.admitted, true);
      scheduler.kick(task);
      scheduler.kick(task);
      await started[0]!.promise;
      scheduler.kick(task);
      assert.deepEqual(calls, ['compile_context']);
      assert.equal(scheduler.busy(task.taskId), true);

      compiled.resolve();
      await started[1]!.promise;
      scheduler.kick(task);
      assert.deepEqual(calls, ['compile_context', 'dispatch']);
      assert.equal(task.frontier, 'dispatch');

      dispatchDone.resolve();
      await new Promise<void>((resolve) => setImmediate(resolve));
      assert.equal(scheduler.busy(task.taskId), false);
      assert.deepEqual(calls, ['compile_context', 'dispatch'], 'a step that committed nothing is not run again');
      assert.equal(most, 1, 'never two pieces of work for the Task at once');
    } finally {
      task.stop();
      await store.close();
    }
  });

  it('aborts the work in flight with stale_assignment when a new Assignment generation commits, and starts the new generation at once', async () => {
    const { store, task, specs, hooks } = await createdTask('task-fenced');
    const seen: Array<{ work: FrontierWork; generation: number }> = [];
    const reasons: unknown[] = [];
    const second = deferred();
    const effects: FrontierRunner = {
      async perform(handle, work, signal) {
        seen.push({ work, generation: handle.context.generation });
        if (seen.length > 1) return second.resolve();
        await new Promise<void>((_, reject) =>
          signal.addEventListener(
            'abort',
            () => (reasons.push((signal.reason as { code?: string }).code), reject(signal.reason)),
          ),
        );
      },
    };
    const scheduler = new FrontierScheduler({ frontier: effects, serving: () => true, store: () => store, specs });
    hooks.onCommit = () => scheduler.committed(task);
    try {
      await task.send({ type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' }, 'external');
      scheduler.kick(task);
      assert.deepEqual(seen, [{ work: 'compile_context', generation: 1 }]);
      await task.send({ type: 'assignment.commit', harness: 'codex', purpose: 'repair' }, 'external');
      await second.promise;
      assert.deepEqual(reasons, ['stale_assignment']);
      assert.deepEqual(seen, [
        { work: 'compile_context', generation: 1 },
        { work: 'compile_context', generation: 2 },
      ]);
    } finally {
      task.stop();
      await store.close();
    }
  });
  it('tries work that threw again after a backoff on its clock, doubling, until it moves the Task on; no timer is left after', async () => {
    const { store, task, specs, hooks } = await createdTask('task-frontier-retry');
    const clock = manualClock();
    const calls = [deferred(), deferred(), deferred()];
    let n = 0;
    const effects: FrontierRunner = {
      async perform(handle) {
        calls[n++]?.resolve();
        // The provider is down for the first two tries (a lookup or observation that cannot be made).
        if (n <= 2) throw new Error('provider unavailable');
        const body = { taskId: handle.taskId, generation: 1, sources: [], prompt: 'generation 1' };
        await handle.send(
          { type: 'context.compile', generation: 1, contextDigest: digestOf({ kind: 'context', body }) },
          { objects: [{ kind: 'context', body }] },
        );
      },
    };
    const scheduler = new FrontierScheduler({
      frontier: effects,
      serving: () => true,
      store: () => store,
      specs,
      clock,
    });
    hooks.onCommit = () => scheduler.committed(task);
    try {
      await task.send({ type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' }, 'external');
      // Each wait below is for the microtasks the failed work queued (the retry is armed after it
      // settles); setImmediate runs after all of them, and no time passes on the clock.
      const drained = () => new Promise<void>((resolve) => setImmediate(resolve));
      await calls[0]!.promise;
      await drained();
      assert.equal(clock.timers, 1, 'a retry is armed after the failure');
      clock.advance(FRONTIER_RETRY_MS - 1);
      assert.equal(n, 1, 'not before the backoff');
      clock.advance(1);
      await calls[1]!.promise;
      await drained();
      clock.advance(2 * FRONTIER_RETRY_MS - 1);
      assert.equal(n, 2, 'the second backoff is twice the first');
      clock.advance(1);
      await calls[2]!.promise;
      await task.settled();
      await drained();
      assert.equal(task.frontier, 'dispatch');
      assert.equal(clock.timers, 0);
    } finally {
      task.stop();
      await store.close();
    }
  });
});
