import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createRuntime, isRuntimeError } from '../../runtime/index.js';
import { killZero, nextRecord, openRuntime, tempRoot, waitForFile } from './support.js';

// Each job starts a grandchild `sleep` in the background and writes its pid to a file first, so the
// test can prove the whole tree, not just the leader, is gone.
const treeScript = (extra = '') => ({
  kind: 'command' as const,
  command: 'sh',
  args: ['-c', `${extra} sleep 300 & echo $! > grandchild.pid.tmp; mv grandchild.pid.tmp grandchild.pid; sleep 300`],
});

async function grandchildPid(ws: string): Promise<number> {
  await waitForFile(join(ws, 'grandchild.pid'));
  return Number(readFileSync(join(ws, 'grandchild.pid'), 'utf8').trim());
}

describe('stopping jobs', { timeout: 60_000 }, () => {
  it('kills the whole process group on timeout and records timed_out', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state, graceMs: 5_000 });
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-timeout',
      workspace: ws,
      run: treeScript(),
      timeoutMs: 1_000,
    });
    const grandchild = await grandchildPid(ws);
    const record = await rt.observe(jobId);
    assert.equal(record.state, 'timed_out');
    assert.equal(record.stopReason, 'timeout');
    assert.equal(record.exitCode, null);
    assert.equal(record.signal, 'SIGTERM');
    assert.equal(record.groupGone, true);
    assert.equal(killZero(-record.process!.pid), 'ESRCH', 'no process of the group is left');
    assert.equal(killZero(grandchild), 'ESRCH', 'the grandchild sleep is gone');
  });

  it('cancels a running job: its group is killed and the job recorded cancelled', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const running = nextRecord(rt, (r) => r.state === 'running');
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-cancel',
      workspace: ws,
      run: treeScript(),
      timeoutMs: 60_000,
    });
    const { process: leader } = await running;
    const grandchild = await grandchildPid(ws);
    const record = await rt.cancel(jobId);
    assert.equal(record.state, 'cancelled');
    assert.equal(record.stopReason, 'cancel');
    assert.equal(record.process?.pid, leader?.pid);
    assert.equal(killZero(-leader!.pid), 'ESRCH');
    assert.equal(killZero(grandchild), 'ESRCH');
    assert.deepEqual(await rt.observe(jobId), record);
  });

  it('cancels a job before its process starts without starting it', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-early',
      workspace: ws,
      run: treeScript('touch started;'),
      timeoutMs: 60_000,
    });
    const record = await rt.cancel(jobId);
    assert.equal(record.state, 'cancelled');
    assert.equal(record.process, undefined);
    assert.deepEqual(record.files?.changed, [], 'the command never ran');
  });

  it('escalates to SIGKILL when the group ignores SIGTERM past the grace', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const run = treeScript("trap '' TERM;");
    const running = nextRecord(rt, (r) => r.state === 'running');
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-stubborn',
      workspace: ws,
      run,
      timeoutMs: 60_000,
      graceMs: 300,
    });
    await running;
    const grandchild = await grandchildPid(ws);
    const record = await rt.cancel(jobId);
    assert.equal(record.state, 'cancelled');
    assert.equal(record.signal, 'SIGKILL');
    assert.equal(killZero(-record.process!.pid), 'ESRCH');
    assert.equal(killZero(grandchild), 'ESRCH');
  });

  it('stops stragglers left behind by a leader that exits on its own', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const run = {
      kind: 'command' as const,
      command: 'sh',
      args: ['-c', 'sleep 300 & echo $! > grandchild.pid; exit 0'],
    };
    const { jobId } = await rt.dispatch({ clientRequestId: 'req-straggler', workspace: ws, run, timeoutMs: 60_000 });
    const record = await rt.observe(jobId);
    assert.equal(record.state, 'succeeded');
    assert.equal(record.exitCode, 0);
    assert.equal(killZero(-record.process!.pid), 'ESRCH');
    assert.equal(killZero(await grandchildPid(ws)), 'ESRCH');
  });

  it('close() stops running jobs and records them abandoned with stop reason runtime_closed', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await createRuntime({ root: state });
    const running = nextRecord(rt, (r) => r.state === 'running');
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-close',
      workspace: ws,
      run: treeScript(),
      timeoutMs: 60_000,
    });
    const observed = rt.observe(jobId);
    const { process: leader } = await running;
    await rt.close();
    const record = await observed;
    assert.equal(record.state, 'abandoned');
    assert.equal(record.stopReason, 'runtime_closed');
    assert.equal(killZero(-leader!.pid), 'ESRCH');
    const reopened = await openRuntime(t, { root: state });
    assert.deepEqual(await reopened.getJob(jobId), record, 'the terminal record was durable before close resolved');
    await assert.rejects(rt.cancel(jobId), (error) => isRuntimeError(error, 'runtime_closed'));
  });
});
