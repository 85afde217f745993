import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createFrontierWork } from '../../frontier/frontier-work.js';
import type { HarnessConfig } from '../../frontier/harness-config.js';
import { createSupervisor, type Supervisor } from '../../kernel/supervisor.js';
import { createDriverPool } from '../../drivers/pool.js';
import type { DriverRunInput } from '../../drivers/receipt.js';
import { createRuntime } from '../../runtime/index.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

const NAME = `ORDIVON_APPROVALS_TEST_${process.pid}`;

/** Resolves when the Task commits `type` (its run was observed), whenever that happens. */
function committed(sup: Supervisor, taskId: string, type: string): Promise<void> {
  return new Promise((resolve) => {
    const off = sup.subscribe((c) => {
      if (c.taskId === taskId && c.type === type) {
        off();
        resolve();
      }
    });
  });
}

describe('the Host passes the configured permission policy and envFrom names to each run', () => {
  it("uses a harness's own policy over the configuration's default, and hands the Runtime names, not values", async () => {
    const state = tempDir();
    process.env[NAME] = 'a value only the provider may see';
    const seen: DriverRunInput[] = [];
    const pool = createDriverPool({ maxThreads: 1 });
    const runtime = await createRuntime({
      root: join(state, 'runtime'),
      // The Runtime's executor is the Host's seam to the pool: record what crosses it, then run it for real.
      harness: (input, signal) => {
        seen.push(input);
        return pool.run(input, { signal });
      },
    });
    const node: HarnessConfig = {
      driver: 'command',
      command: process.execPath,
      args: ['-e', `console.log(process.env.${NAME} ? 'received' : 'missing')`],
      envFrom: [NAME],
    };
    const effects = createFrontierWork({
      runtime,
      harnesses: {
        plain: node,
        own: { ...node, approvals: 'accept' },
        routed: { ...node, approvals: { policy: 'route', forbid: ['execute', 'delete'] } },
      },
      approvals: 'decline',
      workspaces: join(state, 'workspaces'),
    });
    const sup = createSupervisor({ state, frontier: effects });
    await sup.start();
    try {
      for (const harness of ['plain', 'own', 'routed']) {
        const { taskId } = await sup.createTask({ ...SPEC, taskId: `t-${harness}` });
        const observed = committed(sup, taskId, 'run.observe');
        await sup.send(taskId, { type: 'assignment.commit', harness, stage: 'work' });
        await observed;
      }
      assert.deepEqual(
        seen.map((input) => [input.runId.split('/')[0], input.policy, input.envFrom, input.env[NAME]]),
        [
          ['t-plain', { approvals: 'decline', forbid: [], grants: [] }, [NAME], undefined],
          ['t-own', { approvals: 'accept', forbid: [], grants: [] }, [NAME], undefined],
          ['t-routed', { approvals: 'route', forbid: ['execute', 'delete'], grants: [] }, [NAME], undefined],
        ],
      );
      const job = (await runtime.findJobs({ clientRequestId: seen[0]!.runId }))[0]!;
      assert.equal(job.harness?.ok && job.harness.receipt.finalText, 'received');
      assert.deepEqual(job.run.kind === 'harness' && job.run.envFrom, [NAME]);
    } finally {
      delete process.env[NAME];
      await sup.stop();
      await runtime.close();
      await pool.close();
    }
  });
});
