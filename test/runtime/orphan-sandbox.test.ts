import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it, type TestContext } from 'node:test';
import { groupLeader, jobSandboxes, memberRunning, probeSandbox, spawnGroup, type GroupChild } from '../../os/index.js';
import { Confiner, JobStore, createRuntime, currentExecutor, type JobRecord } from '../../runtime/index.js';
import { optionalPart } from '../support/optional-part.js';
import { tempRoot } from './support.js';

const probe = probeSandbox();
const BWRAP = optionalPart('bubblewrap', probe.ok ? '/usr/bin/bwrap' : undefined, probe.ok ? '' : probe.detail);

/**
 * A confined `sleep` for job `jobId`, as the Runtime's sandbox builder makes it, started by this
 * process and fully set up (bwrap has reported its sandbox); killed when the test ends.
 */
async function confinedSleep(t: TestContext, ws: string, jobId: string): Promise<{ child: GroupChild }> {
  const sandbox = new Confiner({ mode: 'bwrap' }).sandboxFor(jobId, ws, undefined, 'none')!;
  const child = spawnGroup('/bin/sleep', ['300'], { cwd: ws, env: { PATH: '/usr/bin:/bin' }, sandbox });
  t.after(() => {
    for (const member of jobSandboxes(jobId)) process.kill(member.pid, 'SIGKILL');
  });
  const init = await groupLeader(child.pid!, child).sandboxInit;
  assert.ok(init !== undefined, 'bwrap made its sandbox');
  // Wrapped: the child is a promise of its end, which an async function's return would wait for.
  return { child };
}

describe('a job sandbox whose Host died before recording its process', { skip: BWRAP.skip, timeout: 60_000 }, () => {
  it("is found by the job's id on bwrap's command line, and only that job's", async (t) => {
    BWRAP.need();
    const { ws } = tempRoot(t);
    await confinedSleep(t, ws, 'job_mine');
    await confinedSleep(t, ws, 'job_other');
    const mine = jobSandboxes('job_mine');
    const other = jobSandboxes('job_other');
    assert.ok(mine.length >= 1);
    assert.ok(other.length >= 1);
    assert.deepEqual(
      mine.filter((m) => other.some((o) => o.pid === m.pid)),
      [],
    );
    assert.deepEqual(jobSandboxes('job_none'), []);
  });

  it('is killed by the recovery that abandons its job; another job’s sandbox is left alone', async (t) => {
    BWRAP.need();
    const { state, ws } = tempRoot(t);
    const { child: lost } = await confinedSleep(t, ws, 'job_lost');
    const { child: bystander } = await confinedSleep(t, ws, 'job_bystander');
    // The executor: a process that has exited, whose record never named the job's process.
    const gone = spawn('true');
    await once(gone, 'exit');
    const self = currentExecutor();
    const dead = { ...self, executorId: 'dead-executor', pid: gone.pid!, startTicks: self.startTicks + 1 };
    const at = new Date().toISOString();
    const record: JobRecord = {
      v: 1,
      jobId: 'job_lost',
      clientRequestId: 'req-lost',
      workspace: ws,
      run: { kind: 'command', command: '/bin/sleep', args: ['300'], envKeys: [] },
      timeoutMs: 60_000,
      graceMs: 1_000,
      executorId: 'dead-executor',
      executor: dead,
      state: 'running',
      createdAt: at,
      updatedAt: at,
      startedAt: at,
    };
    const store = JobStore.open(state);
    store.insertUnchecked([record]);
    await store.close();

    const runtime = await createRuntime({ root: state });
    t.after(() => runtime.close());
    const after = await runtime.getJob('job_lost');
    assert.equal(after.state, 'abandoned');
    assert.equal(after.stopReason, 'executor_gone');
    assert.equal(after.groupGone, true);
    assert.deepEqual(jobSandboxes('job_lost'), [], 'no process of its sandbox runs');
    const ended = await lost;
    assert.equal(ended.signal, 'SIGKILL', 'the sandbox the spawn made was killed');
    const others = jobSandboxes('job_bystander');
    assert.ok(others.length >= 1 && others.every(memberRunning), 'the other job’s sandbox runs on');
    assert.equal(bystander.exitCode, null);
  });
});
