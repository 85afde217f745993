import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { HostError, createSupervisor } from '../../kernel/index.js';
import { gatedAgent } from '../support/gated-agent.js';
import { tempDir } from '../support/temp.js';

/** A Host on a fresh state root with the gated command agent as harness `agent`, its steps collected. */
async function gatedHost() {
  const dir = tempDir('ordivon-budget-');
  const agent = gatedAgent(dir);
  const steps: string[] = [];
  const waiters = new Set<() => void>();
  const host = await openHost({
    state: join(dir, 'state'),
    harnesses: { agent: agent.harness },
    onStep: (_taskId, text) => {
      steps.push(text);
      for (const wake of [...waiters]) wake();
    },
  });
  return {
    agent,
    host,
    /** Resolves with the first step matching `pattern`, reported already or later. */
    step: (pattern: RegExp): Promise<string> =>
      new Promise((resolve) => {
        const check = () => {
          const found = steps.find((s) => pattern.test(s));
          if (found === undefined) return;
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        check();
      }),
  };
}

describe('a stage budget on a harness that is not Loop v0', { timeout: 60_000 }, () => {
  it('a token budget is not dispatched to a command harness (budget_unsupported): nothing is intended or run', async () => {
    const { agent, host, step } = await gatedHost();
    try {
      const sup = host.supervisor;
      const { taskId } = await sup.createTask(agent.spec('budget-1', { budget: { tokens: 1000 } }));
      await sup.send(taskId, { type: 'assignment.commit', harness: 'agent', stage: 'work' });
      assert.match(
        await step(/token or turn budget/),
        /stage work has a token or turn budget: assign it to a loop harness/,
      );
      assert.equal(
        sup.events(taskId).some((e) => e.type === 'dispatch.intend'),
        false,
      );
      assert.equal(agent.runs(), 0);
    } finally {
      await host.stop();
    }
  });

  it("budget.wallMs is the run's deadline when it is tighter than the harness's timeoutMs", async () => {
    const { agent, host } = await gatedHost();
    try {
      const sup = host.supervisor;
      const { taskId } = await sup.createTask(agent.spec('budget-2', { budget: { wallMs: 300 } }));
      await sup.send(taskId, { type: 'assignment.commit', harness: 'agent', stage: 'work' });
      // The gate never opens: the run ends at its deadline.
      assert.equal(await sup.waitFor(taskId, ['waiting', 'completed']), 'waiting');
      const [job] = await host.runtime.findJobs({ clientRequestId: `${taskId}/a1/g1/run` });
      assert.equal(job?.run.kind === 'harness' && job.run.timeoutMs, 300);
      assert.equal(job?.harness?.ok === false && job.harness.kind, 'timeout');
    } finally {
      await host.stop();
    }
  });
});

describe('a stage budget that does not parse', () => {
  const cases: Array<[string, unknown, string]> = [
    ['no bound', { onExceeded: 'ask' }, 'stages.0.budget'],
    ['zero tokens', { tokens: 0 }, 'stages.0.budget.tokens'],
    ['fractional turns', { turns: 1.5 }, 'stages.0.budget.turns'],
    ['a wall time over a day', { wallMs: 86_400_001 }, 'stages.0.budget.wallMs'],
    ['another onExceeded', { tokens: 10, onExceeded: 'retry' }, 'stages.0.budget.onExceeded'],
    ['an unknown key', { tokens: 10, dollars: 2 }, 'stages.0.budget.dollars'],
  ];
  for (const [what, budget, path] of cases)
    it(`refuses ${what} as invalid_spec at ${path}, writing nothing`, async () => {
      const sup = createSupervisor({ state: tempDir() });
      await sup.start();
      try {
        const spec = gatedAgent(tempDir()).spec('bad-budget', { budget });
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
