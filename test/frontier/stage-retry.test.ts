import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { journalHas } from '../support/wait.js';
import { openHost, type Host } from '../../host/host.js';
import { HostError, createSupervisor, manualClock, type Clock } from '../../kernel/index.js';
import { gatedAgent } from '../support/gated-agent.js';
import { tempDir } from '../support/temp.js';

/**
 * One state root and the gated agent (test/support/gated-agent.ts). Each `boot` opens a Host on
 * the root (a restart); stopping it with the run in flight makes its Runtime record the job
 * `abandoned`: the run was stopped by the Host, as a drain's timeout or a crash leaves it.
 */
function rig(retry: { max: number; backoffMs?: number }) {
  const dir = tempDir('ordivon-retry-');
  const agent = gatedAgent(dir);
  const steps: string[] = [];
  const stepWaiters = new Set<() => void>();
  return {
    ...agent,
    spec: agent.spec('retry-1', { retry }),
    boot: (clock?: Clock): Promise<Host> =>
      openHost({
        state: join(dir, 'state'),
        ...(clock ? { clock } : {}),
        harnesses: { agent: agent.harness },
        onStep: (_taskId, text) => {
          steps.push(text);
          for (const wake of [...stepWaiters]) wake();
        },
      }),
    /** Resolves once the Host reported a step matching `pattern` (since the rig was made or `forgetSteps`). */
    step: (pattern: RegExp): Promise<string> =>
      new Promise((resolve) => {
        const check = () => {
          const found = steps.find((s) => pattern.test(s));
          if (found !== undefined) {
            stepWaiters.delete(check);
            resolve(found);
          }
        };
        stepWaiters.add(check);
        check();
      }),
    forgetSteps: () => void steps.splice(0),
  };
}

/** Creates the Task, assigns its stage and resolves once its run is in flight. */
async function startStage(host: Host, r: ReturnType<typeof rig>): Promise<string> {
  const { taskId } = await host.supervisor.createTask(r.spec);
  const sent = await host.supervisor.send(taskId, { type: 'assignment.commit', harness: 'agent', stage: 'work' });
  assert.equal(sent.admitted, true);
  await r.started(1);
  return taskId;
}

describe('a stage whose run the Host stopped is dispatched again', { timeout: 120_000 }, () => {
  it('exhausted retries (retry.max 0) open a DecisionRequest; the answer retry dispatches the stage under a new generation and the Task completes', async () => {
    const r = rig({ max: 0 });
    const first = await r.boot();
    const taskId = await startStage(first, r);
    await first.stop();

    const second = await r.boot();
    try {
      const sup = second.supervisor;
      await journalHas(sup, taskId, 'request.open');
      const requestId = `${taskId}/a1/g1/retry`;
      const task = sup.getTask(taskId)!;
      assert.equal(task.state, 'evaluating');
      assert.deepEqual(
        [task.context.requests[requestId]?.status, task.context.requests[requestId]?.about],
        ['pending', 'operator'],
      );
      const asked = sup.getObject<{ allowed: string[] }>(task.context.requests[requestId]!.digest).body;
      assert.deepEqual(asked.allowed, ['retry', 'settle'], 'a person chooses to retry or to settle');
      assert.equal(sup.events(taskId).filter((e) => e.type === 'assignment.commit').length, 1, 'nothing re-sent');

      const answered = await sup.send(taskId, { type: 'request.answer', requestId, answer: 'retry' });
      assert.equal(answered.admitted, true);
      await r.started(2);
      await r.open();
      assert.equal(await sup.waitFor(taskId, ['completed']), 'completed');
      const assignments = sup.events(taskId).filter((e) => e.type === 'assignment.commit');
      assert.deepEqual(
        assignments.map((e) => [e.origin, e.data.generation]),
        [
          ['external', 1],
          ['host', 2],
        ],
      );
    } finally {
      await second.stop();
    }
  });

  it('keeps the retry count and the backoff in the journal: a Host stopped mid-backoff waits only what is left, and a second stop exhausts retry.max 1', async () => {
    const r = rig({ max: 1, backoffMs: 60_000 });
    const clock = manualClock();
    const first = await r.boot(clock);
    const taskId = await startStage(first, r);
    await first.stop();

    // Booted, the Host observes the stopped run and waits out the backoff on its clock.
    const second = await r.boot(clock);
    assert.match(await r.step(/retrying in/), /retrying in 60000 ms/);
    await second.stop();
    assert.equal(r.runs(), 1);

    clock.advance(20_000);
    r.forgetSteps();
    const third = await r.boot(clock);
    try {
      assert.match(await r.step(/retrying in/), /retrying in 40000 ms/, 'the backoff runs from the stopped run');
      clock.advance(40_000);
      await r.started(2);
      assert.deepEqual(
        third.supervisor
          .events(taskId)
          .filter((e) => e.type === 'dispatch.intend')
          .map((e) => e.data.clientRequestId),
        [`${taskId}/a1/g1/run`, `${taskId}/a1/g2/run`],
      );
    } finally {
      await third.stop();
    }

    // The retry run was stopped too: one retry allowed, one made, so a person is asked.
    const fourth = await r.boot(clock);
    try {
      const sup = fourth.supervisor;
      await journalHas(sup, taskId, 'request.open');
      assert.equal(sup.getTask(taskId)!.context.requests[`${taskId}/a1/g2/retry`]?.status, 'pending');
      assert.equal(r.runs(), 2, 'no third run without a person');
    } finally {
      await fourth.stop();
    }
  });
});

describe('a stage retry policy that does not parse', () => {
  const cases: Array<[string, unknown, string]> = [
    ['a negative max', { max: -1 }, 'stages.0.retry.max'],
    ['a fractional max', { max: 1.5 }, 'stages.0.retry.max'],
    ['no max', { backoffMs: 10 }, 'stages.0.retry.max'],
    ['a negative backoff', { max: 1, backoffMs: -5 }, 'stages.0.retry.backoffMs'],
    ['an unknown key', { max: 1, tries: 2 }, 'stages.0.retry.tries'],
  ];
  for (const [what, retry, path] of cases)
    it(`refuses ${what} as invalid_spec at ${path}, writing nothing`, async () => {
      const sup = createSupervisor({ state: tempDir() });
      await sup.start();
      try {
        const spec = gatedAgent(tempDir()).spec('bad-retry', { retry });
        await assert.rejects(
          sup.createTask(spec),
          (e) => e instanceof HostError && e.code === 'invalid_spec' && e.path === path,
        );
        assert.equal(sup.listTasks().length, 0);
      } finally {
        await sup.stop();
      }
    });
});
