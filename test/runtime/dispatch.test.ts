import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isRuntimeError } from '../../runtime/index.js';
import { FIXED_CLOCK, killZero, openRuntime, sha256, tempRoot } from './support.js';

const sh = (script: string) => ({ kind: 'command' as const, command: 'sh', args: ['-c', script] });

describe('dispatch', () => {
  it('runs a command to succeeded with exit code, output digests, tails and the files it changed', async (t) => {
    const { state, ws } = tempRoot(t);
    writeFileSync(join(ws, 'keep.txt'), 'untouched');
    writeFileSync(join(ws, 'mod.txt'), 'before');
    const rt = await openRuntime(t, { root: state, executorId: 'exec-a', clock: FIXED_CLOCK });
    const script = 'printf hello; printf oops >&2; printf new > out.txt; printf after > mod.txt';
    const { jobId, existing } = await rt.dispatch({
      clientRequestId: 'req-ok',
      workspace: ws,
      run: sh(script),
      timeoutMs: 20_000,
    });
    assert.equal(existing, false);
    const record = await rt.observe(jobId);

    assert.equal(record.state, 'succeeded');
    assert.equal(record.exitCode, 0);
    assert.equal(record.signal, null);
    assert.equal(record.executorId, 'exec-a');
    assert.equal(record.executor.pid, process.pid);
    assert.equal(record.createdAt, '2026-01-02T03:04:05.000Z');
    assert.equal(record.endedAt, '2026-01-02T03:04:05.000Z');
    assert.equal(typeof record.process?.pid, 'number');
    assert.equal(record.groupGone, true);
    assert.deepEqual(record.stdout, {
      bytes: 5,
      capturedBytes: 5,
      digest: sha256('hello'),
      truncated: false,
      tail: 'hello',
    });
    assert.equal(record.stderr?.digest, sha256('oops'));
    assert.deepEqual(record.files, {
      changed: [
        { name: 'mod.txt', kind: 'file', bytes: 5, digest: sha256('after') },
        { name: 'out.txt', kind: 'file', bytes: 3, digest: sha256('new') },
      ],
      deleted: [],
      truncated: false,
    });
    assert.equal(killZero(-record.process!.pid), 'ESRCH');
    assert.deepEqual(await rt.getJob(jobId), record, 'the terminal record is what is stored');
  });

  it('records a non-zero exit as failed with its exit code', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-fail',
      workspace: ws,
      run: sh('exit 7'),
      timeoutMs: 20_000,
    });
    const record = await rt.observe(jobId);
    assert.equal(record.state, 'failed');
    assert.equal(record.exitCode, 7);
    assert.equal(record.error, undefined);
  });

  it('caps the digested output and keeps a bounded tail', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state, captureCapBytes: 4, tailBytes: 3 });
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-cap',
      workspace: ws,
      run: sh('printf 0123456789'),
      timeoutMs: 20_000,
    });
    const record = await rt.observe(jobId);
    assert.deepEqual(record.stdout, {
      bytes: 10,
      capturedBytes: 4,
      digest: sha256('0123'),
      truncated: true,
      tail: '789',
    });
  });

  it('makes the starting record visible, with the executor id, before the process runs', async (t) => {
    const { state, ws } = tempRoot(t);
    // The job itself reads the Runtime's store: only an unconfined one can (a confined job sees
    // nothing of the Runtime's root, test/redteam/ shows it).
    const rt = await openRuntime(t, { root: state, executorId: 'exec-visible', confinement: 'none' });
    const storeModule = fileURLToPath(new URL('../../runtime/job-store.js', import.meta.url));
    const probe = [
      `const { JobStore } = await import(${JSON.stringify(storeModule)});`,
      `const store = JobStore.open(${JSON.stringify(state)});`,
      `console.log(JSON.stringify(store.findJobs('req-probe').map((r) => [r.state, r.executorId])));`,
    ].join('\n');
    const run = { kind: 'command' as const, command: process.execPath, args: ['--input-type=module', '-e', probe] };
    const { jobId } = await rt.dispatch({ clientRequestId: 'req-probe', workspace: ws, run, timeoutMs: 20_000 });
    const record = await rt.observe(jobId);
    assert.equal(record.state, 'succeeded', record.stderr?.tail);
    const seen = JSON.parse(record.stdout!.tail) as Array<[string, string]>;
    assert.equal(seen.length, 1);
    assert.ok(['starting', 'running'].includes(seen[0]![0]), `the process saw state ${seen[0]![0]}`);
    assert.equal(seen[0]![1], 'exec-visible');
  });

  it('passes exactly the given environment plus PATH', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const run = {
      kind: 'command' as const,
      command: 'sh',
      args: ['-c', 'printf "%s|%s" "$GREETING" "${HOME:-unset}"'],
      env: { GREETING: 'hi' },
    };
    const { jobId } = await rt.dispatch({ clientRequestId: 'req-env', workspace: ws, run, timeoutMs: 20_000 });
    const record = await rt.observe(jobId);
    assert.equal(record.stdout?.tail, 'hi|unset');
    assert.deepEqual(
      record.run,
      { kind: 'command', command: 'sh', args: run.args, envKeys: ['GREETING'] },
      'env values are not stored',
    );
  });

  it('records a command that cannot be spawned as failed with spawn_failed', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const run = { kind: 'command' as const, command: join(ws, 'no-such-binary') };
    const { jobId } = await rt.dispatch({ clientRequestId: 'req-enoent', workspace: ws, run, timeoutMs: 20_000 });
    const record = await rt.observe(jobId);
    assert.equal(record.state, 'failed');
    assert.equal(record.error?.code, 'spawn_failed');
    assert.equal(record.process, undefined);
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['an empty command', { run: { kind: 'command', command: '' } }, 'run.command'],
    ['an unknown run kind', { run: { kind: 'shell', command: 'x' } }, 'run.kind'],
    ['a negative timeout', { timeoutMs: -1 }, 'timeoutMs'],
    ['a relative workspace', { workspace: 'ws' }, 'workspace'],
    ['an unknown field', { priority: 1 }, 'priority'],
  ];
  for (const [what, patch, path] of invalid) {
    it(`rejects ${what} with invalid_dispatch naming ${path}, and writes nothing`, async (t) => {
      const { state, ws } = tempRoot(t);
      const rt = await openRuntime(t, { root: state });
      const input = { clientRequestId: 'req-bad', workspace: ws, run: sh('true'), timeoutMs: 1_000, ...patch };
      await assert.rejects(
        rt.dispatch(input as never),
        (error) =>
          isRuntimeError(error, 'invalid_dispatch') &&
          error.message.includes(path) &&
          error.path !== undefined &&
          !error.message.startsWith('invalid_dispatch') &&
          !error.retryable,
      );
      assert.deepEqual(await rt.findJobs({ clientRequestId: 'req-bad' }), []);
    });
  }

  it('rejects a workspace that does not exist with workspace_missing', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const input = { clientRequestId: 'req-nows', workspace: join(ws, 'absent'), run: sh('true'), timeoutMs: 1_000 };
    await assert.rejects(rt.dispatch(input), (error) => isRuntimeError(error, 'workspace_missing'));
    assert.deepEqual(await rt.findJobs({ clientRequestId: 'req-nows' }), []);
  });

  it('rejects calls after close with runtime_closed', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    await rt.close();
    await assert.rejects(
      rt.dispatch({ clientRequestId: 'late', workspace: ws, run: sh('true'), timeoutMs: 1_000 }),
      (error) => isRuntimeError(error, 'runtime_closed'),
    );
  });
});
