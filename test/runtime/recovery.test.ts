import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { descendantsOf, memberRunning, procStat, type TreeMember } from '../../os/index.js';
import { JobStore, createRuntime, currentExecutor, isRuntimeError, type JobRecord } from '../../runtime/index.js';
import { killZero, openRuntime, tempRoot } from './support.js';

const CHILD = fileURLToPath(new URL('./fixtures/runtime-child.js', import.meta.url));

interface Started {
  child: ChildProcess;
  jobId: string;
  pgid: number;
  /** The job's tree as this machine sees it (a confined job's own pids are its pid namespace's). */
  tree: TreeMember[];
}

/** Starts a Runtime in a child process with one running job; everything is killed when the test ends. */
async function startExecutor(t: TestContext, state: string, ws: string, clientRequestId: string): Promise<Started> {
  const child = spawn(process.execPath, [CHILD, state, ws, clientRequestId], { stdio: ['ignore', 'pipe', 'inherit'] });
  let pgid: number | undefined;
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (pgid !== undefined && killZero(-pgid) === 'alive') process.kill(-pgid, 'SIGKILL');
  });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  const ready = JSON.parse(line) as { jobId: string; pgid: number };
  pgid = ready.pgid;
  const tree = descendantsOf(ready.pgid);
  assert.ok(tree.length >= 2, 'the job runs a shell and its grandchild sleep');
  return { child, jobId: ready.jobId, pgid: ready.pgid, tree };
}

async function sigkill(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

describe('recovery', { timeout: 60_000 }, () => {
  it('leaves the jobs of a live Runtime alone, and abandons them once that executor is SIGKILLed', async (t) => {
    const { state, ws } = tempRoot(t);
    const executor = await startExecutor(t, state, ws, 'req-restart');

    const bystander = await createRuntime({ root: state });
    const report = await bystander.recover();
    assert.deepEqual(report.abandoned, []);
    assert.deepEqual(report.skipped, [{ jobId: executor.jobId, executorId: 'child-executor' }]);
    assert.equal((await bystander.getJob(executor.jobId)).state, 'running');
    assert.equal(killZero(-executor.pgid), 'alive', 'a live Runtime is not robbed');
    await assert.rejects(bystander.cancel(executor.jobId), (error) => isRuntimeError(error, 'job_foreign'));
    await bystander.close();

    await sigkill(executor.child);
    assert.equal(killZero(-executor.pgid), 'alive', 'the job group outlives its executor');

    const restarted = await openRuntime(t, { root: state });
    const record = await restarted.getJob(executor.jobId);
    assert.equal(record.state, 'abandoned');
    assert.equal(record.exitCode, null);
    assert.equal(record.signal, null);
    assert.equal(record.stopReason, 'executor_gone');
    assert.equal(record.executorId, 'child-executor');
    assert.equal(record.groupGone, true);
    assert.equal(killZero(-executor.pgid), 'ESRCH', 'the orphaned process group is gone');
    assert.deepEqual(executor.tree.filter(memberRunning), [], 'its grandchild too');
    assert.deepEqual(await restarted.recover(), { abandoned: [], skipped: [], corrupt: [] }, 'recovery is idempotent');
  });

  it('observe() of a job run by another process resolves abandoned when that executor dies', async (t) => {
    const { state, ws } = tempRoot(t);
    const executor = await startExecutor(t, state, ws, 'req-foreign');
    const watcher = await openRuntime(t, { root: state, foreignPollMs: 50 });
    const observed = watcher.observe(executor.jobId);
    await sigkill(executor.child);
    const record = await observed;
    assert.equal(record.state, 'abandoned');
    assert.equal(record.stopReason, 'executor_gone');
    assert.equal(killZero(-executor.pgid), 'ESRCH');
    assert.deepEqual(executor.tree.filter(memberRunning), []);
  });

  it('kills an orphan group only when it provably belongs to the job, and never touches other hosts', async (t) => {
    const { state, ws } = tempRoot(t);
    const spawnLeader = () => {
      const leader = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
      t.after(() => {
        if (killZero(-leader.pid!) === 'alive') process.kill(-leader.pid!, 'SIGKILL');
      });
      return { pid: leader.pid!, startTicks: procStat(leader.pid!)!.startTicks, exited: once(leader, 'exit') };
    };
    const owned = spawnLeader();
    const reused = spawnLeader();
    const gone = spawn('true');
    await once(gone, 'exit');
    const self = currentExecutor();
    const deadExecutor = { ...self, executorId: 'dead-executor', pid: gone.pid!, startTicks: self.startTicks + 1 };
    const base = {
      v: 1 as const,
      workspace: ws,
      run: { kind: 'command' as const, command: 'sleep', args: ['300'], envKeys: [] },
      timeoutMs: 60_000,
      graceMs: 1_000,
      state: 'running' as const,
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    };
    const records: JobRecord[] = [
      {
        ...base,
        jobId: 'job_owned',
        clientRequestId: 'req-owned',
        executorId: 'dead-executor',
        executor: deadExecutor,
        process: { pid: owned.pid, startTicks: owned.startTicks },
      },
      // Same pid, different start time: the pid was reused by an unrelated process, which must survive.
      {
        ...base,
        jobId: 'job_reused',
        clientRequestId: 'req-reused',
        executorId: 'dead-executor',
        executor: deadExecutor,
        process: { pid: reused.pid, startTicks: reused.startTicks + 1 },
      },
      {
        ...base,
        jobId: 'job_remote',
        clientRequestId: 'req-remote',
        executorId: 'remote',
        executor: { ...deadExecutor, executorId: 'remote', hostname: 'another-host' },
      },
    ];
    const store = JobStore.open(state);
    store.insertUnchecked(records);
    await store.close();

    const rt = await createRuntime({ root: state, recover: false });
    t.after(() => rt.close());
    const report = await rt.recover();
    assert.deepEqual(report.abandoned.map((r) => r.jobId).sort(), ['job_owned', 'job_reused']);
    assert.deepEqual(report.skipped, [{ jobId: 'job_remote', executorId: 'remote' }]);
    await owned.exited;
    assert.equal(killZero(-owned.pid), 'ESRCH', 'the job group was killed');
    assert.equal(killZero(-reused.pid), 'alive', 'the unrelated group with a reused pid was left alone');
    assert.equal((await rt.getJob('job_remote')).state, 'running');
  });
});
