import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JobStore, createRuntime, isRuntimeError, type JobRecord } from '../../runtime/index.js';
import { openRuntime, tempRoot } from './support.js';

const appendLine = (file: string) => ({ kind: 'command' as const, command: 'sh', args: ['-c', `echo run >> ${file}`] });
const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '');

describe('clientRequestId index', () => {
  it('returns the existing job for a repeated clientRequestId and starts one process', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const input = { clientRequestId: 'req-seq', workspace: ws, run: appendLine('runs.log'), timeoutMs: 20_000 };
    const first = await rt.dispatch(input);
    await rt.observe(first.jobId);
    const second = await rt.dispatch(input);
    assert.deepEqual(second, { jobId: first.jobId, existing: true });
    assert.deepEqual(lines(join(ws, 'runs.log')), ['run']);
  });

  it('refuses a repeated clientRequestId that names another request with idempotency_conflict, starting nothing', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const input = { clientRequestId: 'req-key', workspace: ws, run: appendLine('key.log'), timeoutMs: 20_000 };
    const first = await rt.dispatch(input);
    await rt.observe(first.jobId);
    const conflict = (e: unknown, field: string) =>
      isRuntimeError(e) &&
      e.code === 'idempotency_conflict' &&
      e.message.includes(`differs in ${field}`) &&
      e.message.includes(first.jobId);
    await assert.rejects(rt.dispatch({ ...input, run: appendLine('other.log') }), (e) => conflict(e, 'run'));
    await assert.rejects(rt.dispatch({ ...input, timeoutMs: 30_000 }), (e) => conflict(e, 'timeoutMs'));
    await assert.rejects(rt.dispatch({ ...input, graceMs: 1 }), (e) => conflict(e, 'graceMs'));
    // the same request again is still the same job
    assert.deepEqual(await rt.dispatch(input), { jobId: first.jobId, existing: true });
    assert.deepEqual(
      [(await rt.findJobs({ clientRequestId: 'req-key' })).length, lines(join(ws, 'key.log'))],
      [1, ['run']],
    );
  });

  it('refuses another request under an id being admitted in the same turn', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const input = { clientRequestId: 'req-turn', workspace: ws, run: appendLine('turn.log'), timeoutMs: 20_000 };
    const [first, second] = await Promise.allSettled([
      rt.dispatch(input),
      rt.dispatch({ ...input, run: appendLine('else.log') }),
    ]);
    assert.equal(first.status, 'fulfilled');
    assert.ok(
      second.status === 'rejected' && isRuntimeError(second.reason) && second.reason.code === 'idempotency_conflict',
      String(second.status === 'rejected' ? second.reason : 'fulfilled'),
    );
    await rt.observe((first as PromiseFulfilledResult<{ jobId: string }>).value.jobId);
    assert.deepEqual(lines(join(ws, 'turn.log')), ['run']);
  });

  it('starts one process when dispatches with the same id race in the same turn', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    const input = { clientRequestId: 'req-race', workspace: ws, run: appendLine('race.log'), timeoutMs: 20_000 };
    const results = await Promise.all([rt.dispatch(input), rt.dispatch(input), rt.dispatch(input)]);
    const ids = new Set(results.map((r) => r.jobId));
    assert.equal(ids.size, 1);
    assert.deepEqual(results.map((r) => r.existing).sort(), [false, true, true]);
    await rt.observe(results[0]!.jobId);
    assert.equal((await rt.findJobs({ clientRequestId: 'req-race' })).length, 1);
    assert.deepEqual(lines(join(ws, 'race.log')), ['run']);
  });

  it('finds a job by its exact id after a restart and observes its terminal record from disk', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await createRuntime({ root: state });
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-disk',
      workspace: ws,
      run: appendLine('d.log'),
      timeoutMs: 20_000,
    });
    const terminal = await rt.observe(jobId);
    await rt.close();
    const reopened = await openRuntime(t, { root: state });
    assert.deepEqual(await reopened.findJobs({ clientRequestId: 'req-disk' }), [terminal]);
    assert.deepEqual(await reopened.observe(jobId), terminal);
    assert.deepEqual(await reopened.cancel(jobId), terminal, 'cancelling a terminal job changes nothing');
    assert.deepEqual(await reopened.findJobs({ clientRequestId: 'req-dis' }), [], 'a prefix of the id is not a match');
    assert.deepEqual(
      await reopened.findJobs({ clientRequestId: 'req-disk-2' }),
      [],
      'an extension of the id is not a match',
    );
  });

  it('reports 0, 1 and 2 matches; with 2 (simulated corruption) dispatch fails identity_conflict', async (t) => {
    const { state, ws } = tempRoot(t);
    const rt = await createRuntime({ root: state });
    assert.deepEqual(await rt.findJobs({ clientRequestId: 'req-dup' }), []);
    const { jobId } = await rt.dispatch({
      clientRequestId: 'req-dup',
      workspace: ws,
      run: appendLine('dup.log'),
      timeoutMs: 20_000,
    });
    const original = await rt.observe(jobId);
    assert.deepEqual(await rt.findJobs({ clientRequestId: 'req-dup' }), [original]);
    await rt.close();

    // Out-of-band tampering through the documented low-level insert: a second job under the same id.
    const store = JobStore.open(state);
    const twin: JobRecord = { ...original, jobId: `${original.jobId}-twin` };
    store.insertUnchecked([twin]);
    await store.close();

    const reopened = await openRuntime(t, { root: state });
    const found = await reopened.findJobs({ clientRequestId: 'req-dup' });
    assert.deepEqual(found.map((r) => r.jobId).sort(), [original.jobId, twin.jobId].sort());
    await assert.rejects(
      reopened.dispatch({ clientRequestId: 'req-dup', workspace: ws, run: appendLine('dup.log'), timeoutMs: 20_000 }),
      (error) => isRuntimeError(error, 'identity_conflict'),
    );
    assert.deepEqual(lines(join(ws, 'dup.log')), ['run']);
  });

  it('fails record_corrupt for a stored record that does not parse', async (t) => {
    const { state } = tempRoot(t);
    const store = JobStore.open(state);
    store.putRawUnchecked('job_corrupt', { v: 1, jobId: 'job_corrupt', state: 'exploded' });
    store.putRawUnchecked('job_bytes', Buffer.from([0xc1, 0xff, 0x00]));
    await store.close();
    const rt = await openRuntime(t, { root: state });
    for (const jobId of ['job_corrupt', 'job_bytes']) {
      await assert.rejects(
        rt.getJob(jobId),
        (error) => isRuntimeError(error, 'record_corrupt') && error.message.includes(jobId),
      );
    }
    await assert.rejects(
      rt.getJob('job_corrupt'),
      (error) => isRuntimeError(error, 'record_corrupt') && error.message.includes('state'),
    );
  });

  it('fails job_not_found for an unknown job id', async (t) => {
    const { state } = tempRoot(t);
    const rt = await openRuntime(t, { root: state });
    await assert.rejects(rt.getJob('job_nope'), (error) => isRuntimeError(error, 'job_not_found'));
    await assert.rejects(rt.observe('job_nope'), (error) => isRuntimeError(error, 'job_not_found'));
    await assert.rejects(rt.cancel('job_nope'), (error) => isRuntimeError(error, 'job_not_found'));
  });

  it('refuses to open a Runtime whose store has an unknown format', async (t) => {
    const { state } = tempRoot(t);
    const { open } = await import('lmdb');
    mkdirSync(state);
    const env = open({ path: join(state, 'runtime.lmdb'), maxDbs: 8 });
    env.openDB({ name: 'meta' }).putSync('format', 99);
    await env.close();
    await assert.rejects(createRuntime({ root: state }), (error) => isRuntimeError(error, 'format_unknown'));
  });
});
