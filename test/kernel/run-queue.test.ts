import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holdsRunSlot, readyOrder, runLine, type RunLimits, type RunSlotTask } from '../../kernel/run-queue.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { taskFrontier } from '../../machines/index.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { EventStore, digestOf } from '../../store/index.js';
import { SPEC, driveToRunning, receipt } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

const holding = (taskId: string, harness = 'h'): RunSlotTask => ({ taskId, harness, holding: true });
const waiting = (taskId: string, ready: number, harness = 'h'): RunSlotTask => ({
  taskId,
  harness,
  holding: false,
  ready,
});

describe('runLine', () => {
  const cases: Array<[string, RunSlotTask[], RunLimits, string[], Record<string, string>]> = [
    ['no limit dispatches every waiting Task', [waiting('a', 1), waiting('b', 2)], {}, ['a', 'b'], {}],
    [
      'the Host full: every waiting Task waits on runs, in ready order',
      [holding('x'), waiting('b', 2), waiting('a', 1)],
      { runs: 1 },
      [],
      { a: '1 runs', b: '2 runs' },
    ],
    [
      'a free slot goes to the first in line, not the first listed',
      [waiting('z', 3), waiting('y', 1), waiting('x', 2)],
      { runs: 1 },
      ['y'],
      { x: '1 runs', z: '2 runs' },
    ],
    ['equal readings are ordered by taskId', [waiting('b', 5), waiting('a', 5)], { runs: 1 }, ['a'], { b: '1 runs' }],
    [
      'a Task whose harness is full waits on it; one of another harness behind it goes',
      [holding('x', 'a'), waiting('a1', 1, 'a'), waiting('b1', 2, 'b')],
      { runs: 3, harnesses: { a: 1 } },
      ['b1'],
      { a1: '1 harness' },
    ],
    [
      'the Host limit counts every harness',
      [holding('x', 'a'), waiting('b1', 1, 'b'), waiting('b2', 2, 'b')],
      { runs: 2, harnesses: { a: 1 } },
      ['b1'],
      { b2: '1 runs' },
    ],
    [
      'a Task neither holding nor waiting is left out',
      [{ taskId: 'q', harness: 'h', holding: false }],
      { runs: 1 },
      [],
      {},
    ],
  ];
  for (const [title, tasks, limits, dispatch, queued] of cases)
    it(title, () => {
      const line = runLine(tasks, limits);
      assert.deepEqual(line.dispatch, dispatch);
      assert.deepEqual(Object.fromEntries([...line.queued].map(([id, q]) => [id, `${q.position} ${q.limit}`])), queued);
    });
});

describe('holdsRunSlot', () => {
  // Read through the states' frontiers, so a renamed state or a moved tag fails here.
  const states: Array<[string, boolean]> = [
    ['compiling', false],
    ['ready', false],
    ['dispatching', true],
    ['unknown', true],
    ['running', true],
  ];
  for (const [state, holds] of states)
    it(`a Task in assigned.${state} ${holds ? 'holds' : 'does not hold'} a run slot`, () => {
      assert.equal(holdsRunSlot(taskFrontier({ assigned: state })), holds);
    });
  for (const state of ['evaluating', 'verifying', 'waiting', 'blocked', 'cancelled', 'completed'])
    it(`a Task in ${state} does not hold a run slot`, () => assert.equal(holdsRunSlot(taskFrontier(state)), false));
});

describe('readyOrder: the place in line a ready Task has', () => {
  /** Drives `x` to a run at g1, `y` to one after it, then observes x's run `status` and readies x at g2. */
  async function history(status: 'abandoned' | 'succeeded') {
    const state = tempDir();
    const sup = createSupervisor({ state });
    await sup.start();
    try {
      for (const taskId of ['x', 'y']) await sup.createTask({ ...SPEC, taskId });
      const run = await driveToRunning(sup, 'x', 1);
      await driveToRunning(sup, 'y', 1);
      const x = sup.taskActor('x')!;
      const receiptBody = receipt(run.clientRequestId, run.contextDigest);
      const observed = await x.send(
        {
          type: 'run.observe',
          generation: 1,
          clientRequestId: run.clientRequestId,
          contextDigest: run.contextDigest,
          receiptDigest: digestOf({ kind: 'receipt', body: receiptBody }),
          jobStatus: status,
          evidence: {},
        },
        'host',
        { objects: [{ kind: 'receipt', body: receiptBody }] },
      );
      assert.equal(observed.written, true, observed.code);
      await driveToRunning(sup, 'x', 2);
    } finally {
      await sup.stop();
    }
    const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
    try {
      const compiles = (taskId: string) =>
        [...store.stream(taskId)]
          .filter(({ event }) => event.type === 'context.compile')
          .map(({ event }) => event.mono);
      const order = (taskId: string) => readyOrder(store, taskId, [...store.stream(taskId)].length);
      return { x: order('x'), y: order('y'), xCompiles: compiles('x'), yCompiles: compiles('y') };
    } finally {
      await store.close();
    }
  }

  it('a stage dispatched again after the Host stopped its run keeps the place its stopped run had', async () => {
    const h = await history('abandoned');
    assert.equal(h.x, h.xCompiles[0]);
    assert.ok(h.x < h.y, 'x, ready before y and stopped by a crash, is still before y');
  });

  it('a stage run again after a run that ended is ready anew: behind what was ready before it', async () => {
    const h = await history('succeeded');
    assert.equal(h.x, h.xCompiles[1]);
    assert.ok(h.x > h.y);
  });
});
