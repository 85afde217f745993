import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { branchAgents, type BranchAgents } from '../support/branch-agent.js';
import { tempDir } from '../support/temp.js';

const HOST_MODULE = fileURLToPath(new URL('../../host/index.js', import.meta.url));

/**
 * The acceptance: its first run marks that it ran (`.ordivon/`, which no source digest covers) and
 * never ends; a later run passes. Only a run stopped with its Host, and run again, can pass.
 */
const ACCEPTANCE = {
  command: '/bin/sh',
  args: ['-c', 'if [ -d .ordivon ]; then exit 0; fi; mkdir .ordivon; exec sleep 600'],
};

function spec(agents: BranchAgents) {
  return {
    taskId: 'verify',
    title: 'Make x equal 2',
    goal: 'The module a.js exports x; make it 2 and report.',
    requiredArtifacts: [{ name: 'report.md', kind: 'text', pattern: '^# ' }],
    workspaceSeed: agents.seed,
    acceptance: ACCEPTANCE,
    start: { stage: 'work', harness: 'right' },
  };
}

/**
 * A Host process that runs the Task and SIGKILLs itself once the acceptance's first run has
 * marked its workspace: the verification job is then running, and dies with its Host.
 */
const DRIVER = `
const { openHost } = await import(process.env.HOST_MODULE);
const fs = await import('node:fs');
const path = await import('node:path');
const config = JSON.parse(fs.readFileSync('config.json', 'utf8'));
const host = await openHost({ state: 'state', harnesses: config.harnesses });
const workspace = path.join('state', 'workspaces', 'verify', 'attempt-1');
let watching = false;
host.supervisor.subscribe((c) => {
  if (c.taskId !== 'verify' || c.state !== 'verifying' || watching) return;
  watching = true;
  const marked = () => fs.existsSync(path.join(workspace, '.ordivon')) && process.kill(process.pid, 'SIGKILL');
  fs.watch(workspace, marked);
  marked();
});
await host.supervisor.createTask(JSON.parse(fs.readFileSync('spec.json', 'utf8')));
await host.supervisor.waitFor('verify', ['completed', 'waiting']);
await host.stop();
process.exit(3);
`;

describe('the Host SIGKILLed while a verification runs', { timeout: 120_000 }, () => {
  it('runs the verification again under its next request id at the next boot, and the Task completes: a stopped verification is not a failed one', async () => {
    const agents = branchAgents(tempDir());
    writeFileSync(join(agents.dir, 'spec.json'), JSON.stringify(spec(agents)));
    writeFileSync(join(agents.dir, 'config.json'), JSON.stringify({ harnesses: agents.harnesses() }));
    writeFileSync(join(agents.dir, 'driver.mjs'), DRIVER);
    const child = spawn(process.execPath, ['driver.mjs'], {
      cwd: agents.dir,
      stdio: 'ignore',
      env: { ...process.env, HOST_MODULE },
    });
    const signal = await new Promise((resolve) => child.once('close', (_code, signal) => resolve(signal)));
    assert.equal(signal, 'SIGKILL');

    const host = await openHost({ state: join(agents.dir, 'state'), harnesses: agents.harnesses() as never });
    try {
      const sup = host.supervisor;
      assert.equal(await sup.waitFor('verify', ['completed', 'waiting']), 'completed');
      const records = sup.events('verify').filter((e) => e.type === 'verification.record');
      assert.deepEqual(
        records.map((e) => [e.data['passed'], e.disposition.admitted]),
        [[true, true]],
        'one verification recorded: the one that ran to its end',
      );
      const states = async (id: string) =>
        (await host.runtime.findJobs({ clientRequestId: id })).map((j) => [j.state, j.stopReason]);
      assert.deepEqual(await states('verify/a1/g1/verify'), [['abandoned', 'executor_gone']]);
      assert.deepEqual(
        (await host.runtime.findJobs({ clientRequestId: 'verify/a1/g1/verify-2' })).map((j) => j.state),
        ['succeeded'],
      );
    } finally {
      await host.stop();
    }
  });
});
