import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createDriverPool } from '../../drivers/pool.js';
import type { DriverRunInputIn } from '../../drivers/receipt.js';
import { descendantsOf, procStat } from '../../os/index.js';
import { isRuntimeError, type HarnessExecutor } from '../../runtime/index.js';
import { processHarness } from './process-harness.js';
import { nextRecord, openRuntime, sha256, tempRoot, waitForFile } from './support.js';

function harnessRun(ws: string, patch: Partial<DriverRunInputIn> = {}) {
  const input: DriverRunInputIn = {
    driver: 'command',
    runId: 'run-1',
    command: 'sh',
    args: ['-c', 'cat > diagnosis.json; printf done'],
    cwd: ws,
    prompt: '{"cause":"off-by-one"}',
    contextDigest: 'sha256:' + 'c'.repeat(64),
    timeoutMs: 20_000,
    expectedArtifacts: ['diagnosis.json'],
    ...patch,
  };
  return { kind: 'harness' as const, input };
}

describe('harness jobs', { timeout: 30_000 }, () => {
  it('runs through the injected executor and keeps its DriverResult as evidence', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state, harness: processHarness });
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-harness',
      workspace: ws,
      run: harnessRun(ws),
      timeoutMs: 20_000,
    });
    const record = await rt.observe(jobId);
    assert.equal(record.state, 'succeeded');
    assert.ok(record.harness?.ok);
    const { receipt } = record.harness;
    assert.equal(receipt.jobId, jobId, 'the executor is told which job it runs');
    assert.equal(receipt.finalText, 'done');
    assert.deepEqual(receipt.artifacts, [
      { name: 'diagnosis.json', digest: sha256('{"cause":"off-by-one"}'), bytes: 22 },
    ]);
    assert.deepEqual(
      record.files?.changed.map((f) => f.name),
      ['diagnosis.json'],
    );
    assert.equal(record.run.kind, 'harness');
    if (record.run.kind === 'harness') assert.equal(record.run.promptDigest, sha256('{"cause":"off-by-one"}'));
    assert.equal(JSON.stringify(record).includes('off-by-one'), false, 'the prompt itself is not stored');
  });

  it('records a failed DriverResult as a failed job', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state, harness: processHarness });
    const run = harnessRun(ws, { args: ['-c', 'exit 3'] });
    const record = await rt.observe(
      (await rt.dispatch({ clientRequestId: 'req-hfail', workspace: ws, run, timeoutMs: 20_000 })).jobId,
    );
    assert.equal(record.state, 'failed');
    assert.equal(record.harness?.ok, false);
    assert.equal(record.harness?.ok === false && record.harness.kind, 'process_exited');
  });

  it('aborts the executor on timeout and records timed_out', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state, harness: processHarness });
    const run = harnessRun(ws, { command: 'sleep', args: ['30'], graceMs: 200 });
    const record = await rt.observe(
      (await rt.dispatch({ clientRequestId: 'req-hto', workspace: ws, run, timeoutMs: 300 })).jobId,
    );
    assert.equal(record.state, 'timed_out');
    assert.equal(record.stopReason, 'timeout');
    assert.equal(record.harness?.ok === false && record.harness.kind, 'timeout');
  });

  it('turns a throwing or malformed executor into failed job data', async (t) => {
    const { state, ws } = tempRoot(t);
    const throwing: HarnessExecutor = async () => {
      throw new Error('pool crashed');
    };
    const malformed = (async () => ({ ok: true })) as unknown as HarnessExecutor;
    for (const [executor, code] of [
      [throwing, 'harness_threw'],
      [malformed, 'harness_result_invalid'],
    ] as const) {
      const rt = await openRuntime(t, { root: `${state}-${code}`, harness: executor });
      const record = await rt.observe(
        (await rt.dispatch({ clientRequestId: `req-${code}`, workspace: ws, run: harnessRun(ws), timeoutMs: 5_000 }))
          .jobId,
      );
      assert.equal(record.state, 'failed');
      assert.equal(record.error?.code, code);
    }
  });

  it('records the provider group the driver pool reports (pid and start time) in the job record, once', async (t) => {
    const { state, ws } = tempRoot(t);
    const pool = createDriverPool({ minThreads: 0, maxThreads: 1 });
    t.after(() => pool.close());
    // Wired as the Host wires it: the executor passes nothing but the input and the signal.
    const rt = await openRuntime(t, { root: state, harness: (input, signal) => pool.run(input, { signal }) });
    // The provider waits for `go` while the test looks at the group the job recorded: a live process
    // with that start time, the provider under it (a confined provider's own pid is its namespace's,
    // so the recorded leader is the sandbox's, and the provider runs inside it).
    const run = harnessRun(ws, {
      args: ['-c', 'touch started; while [ ! -e go ]; do sleep 0.05; done; printf done'],
      expectedArtifacts: [],
    });
    const { jobId } = await rt.dispatch({ clientRequestId: 'req-provider', workspace: ws, run, timeoutMs: 20_000 });
    const recorded = await nextRecord(rt, (r) => r.jobId === jobId && r.process !== undefined);
    await waitForFile(join(ws, 'started'));
    const { pid, startTicks } = recorded.process!;
    assert.equal(procStat(pid)?.startTicks, startTicks, 'the recorded leader runs with the start time recorded');
    assert.ok(descendantsOf(pid).length > 0, "the provider runs in the recorded group leader's tree");
    writeFileSync(join(ws, 'go'), '');
    const record = await rt.observe(jobId);
    assert.equal(record.state, 'succeeded', JSON.stringify(record.harness));
    assert.deepEqual(record.process, { pid, startTicks }, 'the terminal record keeps the provider group');
    assert.deepEqual((await rt.getJob(jobId)).process, { pid, startTicks });
  });

  it('refuses a harness job without an executor (executor_unavailable, retryable) and one whose cwd is not the workspace', async (t) => {
    const { state, ws } = tempRoot(t);
    const bare = await openRuntime(t, { root: state });
    await assert.rejects(
      bare.dispatch({ clientRequestId: 'req-noexec', workspace: ws, run: harnessRun(ws), timeoutMs: 5_000 }),
      (error) => isRuntimeError(error, 'executor_unavailable') && error.retryable,
    );
    assert.deepEqual(await bare.findJobs({ clientRequestId: 'req-noexec' }), []);
    const rt = await openRuntime(t, { root: `${state}-2`, harness: processHarness });
    await assert.rejects(
      rt.dispatch({ clientRequestId: 'req-cwd', workspace: ws, run: harnessRun('/tmp'), timeoutMs: 5_000 }),
      (error) =>
        isRuntimeError(error, 'invalid_dispatch') &&
        error.path === 'run.input.cwd' &&
        error.message.includes('run.input.cwd'),
    );
  });
});
