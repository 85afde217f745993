import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createRuntime, isRuntimeError } from '../../runtime/index.js';
import { descendantsOf, memberRunning, type TreeMember } from '../../os/index.js';
import { killZero, nextRecord, openRuntime, tempRoot, waitForFile } from './support.js';

// Each job starts a grandchild `sleep` in the background and marks it started, so the test can take
// the whole tree as this machine sees it (by host pid and start time: a confined job's own pids are
// its pid namespace's) and prove all of it, not just the leader, is gone.
const treeScript = (extra = '') => ({
  kind: 'command' as const,
  command: 'sh',
  args: ['-c', `${extra} sleep 300 & touch grandchild.started; sleep 300`],
});

/** The job's process tree, once its grandchild runs: the leader and every descendant. */
async function treeOf(ws: string, leader: number): Promise<TreeMember[]> {
  await waitForFile(join(ws, 'grandchild.started'));
  return descendantsOf(leader);
}

const stillRunning = (tree: TreeMember[]): number[] => tree.filter(memberRunning).map((m) => m.pid);

describe('stopping jobs', { timeout: 60_000 }, () => {
  it('kills the whole process group on timeout and records timed_out', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state, graceMs: 5_000 });
    const running = nextRecord(rt, (r) => r.state === 'running');
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-timeout',
      workspace: ws,
      run: treeScript(),
      timeoutMs: 1_000,
    });
    const tree = await treeOf(ws, (await running).process!.pid);
    const record = await rt.observe(jobId);
    assert.equal(record.state, 'timed_out');
    assert.equal(record.stopReason, 'timeout');
    assert.equal(record.exitCode, null);
    assert.equal(record.signal, 'SIGTERM');
    assert.equal(record.groupGone, true);
    assert.equal(killZero(-record.process!.pid), 'ESRCH', 'no process of the group is left');
    assert.ok(tree.length >= 2, 'the tree has the shell and its grandchild sleep');
    assert.deepEqual(stillRunning(tree), [], 'the grandchild sleep and the rest of the tree are gone');
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
    const tree = await treeOf(ws, leader!.pid);
    const record = await rt.cancel(jobId);
    assert.equal(record.state, 'cancelled');
    assert.equal(record.stopReason, 'cancel');
    assert.equal(record.process?.pid, leader?.pid);
    assert.equal(killZero(-leader!.pid), 'ESRCH');
    assert.deepEqual(stillRunning(tree), []);
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

  it('escalates to SIGKILL when an unconfined group ignores SIGTERM past the grace', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state, confinement: 'none' });
    const run = treeScript("trap '' TERM;");
    const running = nextRecord(rt, (r) => r.state === 'running');
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-stubborn',
      workspace: ws,
      run,
      timeoutMs: 60_000,
      graceMs: 300,
    });
    const tree = await treeOf(ws, (await running).process!.pid);
    const record = await rt.cancel(jobId);
    assert.equal(record.state, 'cancelled');
    assert.equal(record.signal, 'SIGKILL');
    assert.equal(killZero(-record.process!.pid), 'ESRCH');
    assert.deepEqual(stillRunning(tree), []);
  });

  it('stops a confined tree that ignores SIGTERM at once: its sandbox ends, and every process in it with it', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const running = nextRecord(rt, (r) => r.state === 'running');
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-stubborn-confined',
      workspace: ws,
      run: treeScript("trap '' TERM;"),
      timeoutMs: 60_000,
      graceMs: 60_000,
    });
    const tree = await treeOf(ws, (await running).process!.pid);
    const record = await rt.cancel(jobId);
    assert.equal(record.state, 'cancelled');
    assert.equal(record.groupGone, true);
    assert.deepEqual(stillRunning(tree), [], 'a process of the sandbox outlived it');
  });

  it('stops stragglers left behind by a leader that exits on its own', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    // The leader waits for `exit` (the test's word that it took the tree), then exits on its own.
    const run = {
      kind: 'command' as const,
      command: 'sh',
      args: ['-c', 'sleep 300 & touch grandchild.started; while [ ! -e exit ]; do sleep 0.05; done; exit 0'],
    };
    const running = nextRecord(rt, (r) => r.state === 'running');
    const { jobId } = await rt.dispatch({ clientRequestId: 'req-straggler', workspace: ws, run, timeoutMs: 60_000 });
    const tree = await treeOf(ws, (await running).process!.pid);
    writeFileSync(join(ws, 'exit'), '');
    const record = await rt.observe(jobId);
    assert.equal(record.state, 'succeeded');
    assert.equal(record.exitCode, 0);
    assert.equal(killZero(-record.process!.pid), 'ESRCH');
    assert.deepEqual(stillRunning(tree), []);
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
