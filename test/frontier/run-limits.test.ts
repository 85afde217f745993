import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openHost, type Host, type HostOptions } from '../../host/host.js';
import type { Supervisor } from '../../kernel/supervisor.js';
import { linedAgent } from '../support/lined-agent.js';
import { tempDir } from '../support/temp.js';

const HOLDING = ['assigned.dispatching', 'assigned.unknown', 'assigned.running'];

/** Resolves once `check` holds, checked after each commit once its microtasks (the run line's turn) are over. */
function once(sup: Supervisor, check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    let off = () => {};
    const test = () => {
      if (!check()) return;
      off();
      resolve();
    };
    off = sup.subscribe(() => setImmediate(test));
    setImmediate(test);
  });
}

/** Resolves once the Task waits for a run slot (`queued` set). */
const queued = (sup: Supervisor, taskId: string) => once(sup, () => Boolean(sup.getTask(taskId)?.queued));

/** Each queued Task's place in line, and the limit it waits on, as `getTask` shows them. */
function line(sup: Supervisor, taskIds: string[]) {
  return Object.fromEntries(
    taskIds.map((id) => {
      const q = sup.getTask(id)!.queued;
      return [id, q ? `${q.position} ${q.limit} ${q.harness} ${q.max}` : sup.getTask(id)!.state];
    }),
  );
}

/** The `mono` reading of a Task's first event of `type` (generation `g` when given). */
function monoOf(sup: Supervisor, taskId: string, type: string, nth = 0): number {
  const found = sup.events(taskId).filter((e) => e.type === type && e.disposition.admitted);
  assert.ok(found[nth], `${taskId} has no ${type} #${nth}`);
  return found[nth]!.mono;
}

/**
 * From the journals: the most runs whose intervals (dispatch.intend → run.observe, by the events'
 * `mono` readings) overlap at any dispatch.
 */
function mostOverlapping(sup: Supervisor, taskIds: string[]): number {
  const runs = taskIds.flatMap((id) => {
    const events = sup.events(id);
    const intends = events.filter((e) => e.type === 'dispatch.intend');
    const observes = events.filter((e) => e.type === 'run.observe');
    return intends.map((e, i) => ({ from: e.mono, to: observes[i]?.mono ?? Infinity }));
  });
  return Math.max(...runs.map((r) => runs.filter((o) => o.from <= r.from && r.from < o.to).length));
}

async function host(state: string, agent: ReturnType<typeof linedAgent>, options: Partial<HostOptions>): Promise<Host> {
  return openHost({ state, harnesses: { agent: agent.harness }, ...options });
}

describe(
  'concurrency limits: Assignments over the limit wait in order (real Host, command agent)',
  { timeout: 120_000 },
  () => {
    it('concurrency.runs 2 with five Tasks: two run, three wait queued in the order they became ready, and each freed slot goes to the next', async () => {
      const dir = tempDir('ordivon-limits-');
      const agent = linedAgent(dir);
      const h = await host(`${dir}/state`, agent, { concurrency: { runs: 2 } });
      const sup = h.supervisor;
      // Ready in an order that is not the ids' order, so the line cannot be the ids' order by chance.
      const order = ['t-3', 't-5', 't-1', 't-4', 't-2'];
      try {
        for (const id of order) await sup.createTask(agent.spec(id));
        for (const [i, id] of order.entries()) {
          await sup.send(id, { type: 'assignment.commit', harness: 'agent', purpose: 'work' });
          if (i < 2) await agent.startedCount(i + 1);
          else await queued(sup, id);
        }
        assert.deepEqual(agent.started(), ['t-3', 't-5']);
        for (const id of ['t-3', 't-5']) assert.ok(HOLDING.includes(sup.getTask(id)!.state), sup.getTask(id)!.state);
        assert.deepEqual(line(sup, ['t-1', 't-4', 't-2']), {
          't-1': '1 runs agent 2',
          't-4': '2 runs agent 2',
          't-2': '3 runs agent 2',
        });
        for (const id of ['t-1', 't-4', 't-2']) {
          assert.equal(sup.getTask(id)!.state, 'assigned.ready');
          assert.equal(sup.getTask(id)!.frontier, 'dispatch');
          assert.ok(!sup.events(id).some((e) => e.type === 'dispatch.intend'), `${id} has no dispatch intent`);
        }
        assert.deepEqual(sup.listTasks().find((t) => t.taskId === 't-4')?.queued?.position, 2);
        // The order rule, read from the journal: by the context.compile's mono reading.
        assert.deepEqual(
          [...order].sort((a, b) => monoOf(sup, a, 'context.compile') - monoOf(sup, b, 'context.compile')),
          order,
        );

        // Each run released frees its slot for the first in line.
        await agent.release('t-3');
        assert.deepEqual((await agent.startedCount(3)).at(-1), 't-1');
        await once(sup, () => sup.getTask('t-3')!.state === 'completed');
        assert.deepEqual(line(sup, ['t-4', 't-2']), { 't-4': '1 runs agent 2', 't-2': '2 runs agent 2' });
        await agent.release('t-5');
        assert.deepEqual((await agent.startedCount(4)).at(-1), 't-4');
        await agent.release('t-1');
        assert.deepEqual(await agent.startedCount(5), order);
        await agent.release('t-4');
        await agent.release('t-2');
        for (const id of order) assert.equal(await sup.waitFor(id, ['completed']), 'completed');

        assert.equal(mostOverlapping(sup, order), 2);
        const intended = [...order].sort(
          (a, b) => monoOf(sup, a, 'dispatch.intend') - monoOf(sup, b, 'dispatch.intend'),
        );
        assert.deepEqual(intended, order, 'dispatched in the order they became ready');
        for (const id of order) assert.equal(sup.getTask(id)!.queued, undefined);
      } finally {
        await h.stop();
      }
    });

    it("a harness's maxRuns 1 holds its own Tasks back in order while a Task of another harness behind them runs", async () => {
      const dir = tempDir('ordivon-limits-');
      const agent = linedAgent(dir);
      const h = await openHost({
        state: `${dir}/state`,
        harnesses: { a: { ...agent.harness, maxRuns: 1 }, b: agent.harness },
      });
      const sup = h.supervisor;
      try {
        for (const id of ['a-2', 'a-3', 'a-1', 'b-1']) await sup.createTask(agent.spec(id));
        await sup.send('a-2', { type: 'assignment.commit', harness: 'a', purpose: 'work' });
        await agent.startedCount(1);
        for (const id of ['a-3', 'a-1']) {
          await sup.send(id, { type: 'assignment.commit', harness: 'a', purpose: 'work' });
          await queued(sup, id);
        }
        await sup.send('b-1', { type: 'assignment.commit', harness: 'b', purpose: 'work' });
        assert.deepEqual(await agent.startedCount(2), ['a-2', 'b-1']);
        assert.deepEqual(line(sup, ['a-3', 'a-1']), { 'a-3': '1 harness a 1', 'a-1': '2 harness a 1' });
        await agent.release('b-1');
        await sup.waitFor('b-1', ['completed']);
        assert.deepEqual(line(sup, ['a-3', 'a-1']), { 'a-3': '1 harness a 1', 'a-1': '2 harness a 1' });
        await agent.release('a-2');
        assert.deepEqual((await agent.startedCount(3)).at(-1), 'a-3');
        await agent.release('a-3');
        assert.deepEqual((await agent.startedCount(4)).at(-1), 'a-1');
        await agent.release('a-1');
        for (const id of ['a-1', 'a-2', 'a-3']) await sup.waitFor(id, ['completed']);
        assert.equal(mostOverlapping(sup, ['a-1', 'a-2', 'a-3']), 1);
      } finally {
        await h.stop();
      }
    });

    it('Tasks queued when the Host drains and stops are dispatched in the same order after it opens again, the first in line before any other', async () => {
      const dir = tempDir('ordivon-limits-');
      const agent = linedAgent(dir);
      const state = `${dir}/state`;
      // Ready in the reverse of the ids' order, which is the order boot meets the Tasks in.
      const order = ['t-d', 't-c', 't-b', 't-a'];
      const first = await host(state, agent, { concurrency: { runs: 1 } });
      try {
        for (const id of order) await first.supervisor.createTask(agent.spec(id));
        for (const [i, id] of order.entries()) {
          await first.supervisor.send(id, { type: 'assignment.commit', harness: 'agent', purpose: 'work' });
          if (i === 0) await agent.startedCount(1);
          else await queued(first.supervisor, id);
        }
        assert.deepEqual(line(first.supervisor, ['t-c', 't-b', 't-a']), {
          't-c': '1 runs agent 1',
          't-b': '2 runs agent 1',
          't-a': '3 runs agent 1',
        });
        // A drain starts nothing new: t-d's run ends and is observed, its slot frees, and nobody takes it.
        const drained = first.supervisor.finishRunning({ timeoutMs: 60_000 });
        await agent.release('t-d');
        assert.deepEqual(await drained, { running: 1, finished: 1, stopped: 0 });
        assert.equal(first.supervisor.getTask('t-d')!.state, 'evaluating');
        for (const id of ['t-c', 't-b', 't-a']) assert.equal(first.supervisor.getTask(id)!.state, 'assigned.ready');
      } finally {
        await first.stop();
      }
      // Boot finds three Tasks ready and a slot free: the first in line takes it, whichever it meets first.
      const second = await host(state, agent, { concurrency: { runs: 1 } });
      const sup = second.supervisor;
      try {
        assert.deepEqual((await agent.startedCount(2)).at(-1), 't-c');
        await once(sup, () => sup.getTask('t-a')!.queued?.position === 2);
        assert.deepEqual(line(sup, ['t-b', 't-a']), { 't-b': '1 runs agent 1', 't-a': '2 runs agent 1' });
        await agent.release('t-c');
        assert.deepEqual((await agent.startedCount(3)).at(-1), 't-b');
        await agent.release('t-b');
        assert.deepEqual(await agent.startedCount(4), order);
        await agent.release('t-a');
        for (const id of order) assert.equal(await sup.waitFor(id, ['completed']), 'completed');
        assert.equal(mostOverlapping(sup, order), 1);
      } finally {
        await second.stop();
      }
    });

    it('a cancel of the running Task frees its slot for the first in line, and a queued Task cancelled leaves the line', async () => {
      const dir = tempDir('ordivon-limits-');
      const agent = linedAgent(dir);
      const h = await host(`${dir}/state`, agent, { concurrency: { runs: 1 } });
      const sup = h.supervisor;
      try {
        for (const id of ['c-1', 'c-2', 'c-3']) await sup.createTask(agent.spec(id));
        await sup.send('c-1', { type: 'assignment.commit', harness: 'agent', purpose: 'work' });
        await agent.startedCount(1);
        for (const id of ['c-2', 'c-3']) {
          await sup.send(id, { type: 'assignment.commit', harness: 'agent', purpose: 'work' });
          await queued(sup, id);
        }
        assert.equal((await sup.send('c-2', { type: 'task.cancel', reason: 'not needed' })).admitted, true);
        await once(sup, () => sup.getTask('c-3')!.queued?.position === 1);
        assert.equal(sup.getTask('c-2')!.queued, undefined);
        assert.equal((await sup.send('c-1', { type: 'task.cancel', reason: 'stop it' })).admitted, true);
        assert.deepEqual(await agent.startedCount(2), ['c-1', 'c-3']);
        await agent.release('c-3');
        assert.equal(await sup.waitFor('c-3', ['completed']), 'completed');
        assert.ok(!sup.events('c-2').some((e) => e.type === 'dispatch.intend'), 'the cancelled queued Task never ran');
      } finally {
        await h.stop();
      }
    });
  },
);
