import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import {
  createRuntime,
  isRuntimeError,
  isTerminal,
  sharedJobRegistry,
  type JobRecord,
  type JobRegistry,
  type Runtime,
} from '../../runtime/index.js';
import { PgHistory } from '../../store/postgres/index.js';
import { createDatabase, postgresPart, sharedPostgres, sql } from '../support/postgres.js';
import { killZero, nextRecord, tempRoot } from './support.js';

const part = postgresPart();

const sh = (script: string) => ({ kind: 'command' as const, command: 'sh', args: ['-c', script] });
/** A job that runs until a file named `release` appears in its workspace. */
const untilReleased = sh('while [ ! -e release ]; do sleep 0.05; done; printf released');

/** Answers of `alive` as one Runtime's registry got them, and a way to wait for the n-th. */
interface AliveLog {
  answers: Array<{ hostId: string; alive: boolean }>;
  /** Resolves once `n` answers for `hostId` said alive. */
  untilAlive(hostId: string, n: number): Promise<void>;
}

/** Passes every call to the real registry; records what `alive` answered (when the Runtime checked a Host). */
function logAlive(registry: JobRegistry): { registry: JobRegistry; log: AliveLog } {
  const answers: AliveLog['answers'] = [];
  const waiting = new Set<() => void>();
  const log: AliveLog = {
    answers,
    untilAlive: (hostId, n) =>
      new Promise((resolve) => {
        const check = () => {
          if (answers.filter((a) => a.hostId === hostId && a.alive).length < n) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        check();
      }),
  };
  return {
    log,
    registry: {
      ...registry,
      alive: async (hostId) => {
        const alive = await registry.alive(hostId);
        answers.push({ hostId, alive });
        for (const check of [...waiting]) check();
        return alive;
      },
    },
  };
}

/** Fails the test when `observing` settles: it was to wait while the job's Host is alive. */
async function settledEarly(observing: Promise<JobRecord>): Promise<never> {
  const outcome = await observing.then(
    (record) => `resolved ${record.state}`,
    (error: Error) => `rejected ${error.message}`,
  );
  assert.fail(`observe ${outcome} while the job's Host was alive`);
}

/** One Host's Runtime on its own root, recording its jobs in the shared database as `hostId`. */
async function hostRuntime(
  t: TestContext,
  url: string,
  hostId: string,
): Promise<{ runtime: Runtime; history: PgHistory; log: AliveLog }> {
  // A long lease: only the test moves heartbeats (in SQL).
  const history = await PgHistory.open({ url, hostId, leaseMs: 600_000, poolSize: 2 });
  const { registry, log } = logAlive(sharedJobRegistry(hostId, history));
  const { state } = tempRoot(t);
  const runtime = await createRuntime({ root: state, registry, foreignPollMs: 20 });
  t.after(async () => {
    await runtime.close();
    await history.close();
  });
  return { runtime, history, log };
}

/** A job's registry row as [Host, final, record], read straight from the table. */
async function jobRows(url: string, jobId: string): Promise<Array<[string, boolean, unknown]>> {
  const { rows } = await sql(url, `SELECT host_id, final, record FROM ordivon_jobs WHERE job_id = $1`, [jobId]);
  return rows.map((r: { host_id: string; final: boolean; record: string }) => [
    r.host_id,
    r.final,
    JSON.parse(r.record),
  ]);
}

/** Ends a Host's heartbeat now, as if it had stopped renewing long ago (database clock). */
const expireHeartbeat = (url: string, hostId: string) =>
  sql(url, `UPDATE ordivon_hosts SET heartbeat_until = now() - interval '1 second' WHERE host_id = $1`, [hostId]);

describe('jobs across Hosts (job registry on a real PostgreSQL)', { skip: part.skip, timeout: 120_000 }, () => {
  const server = sharedPostgres();

  /** Two Hosts' Runtimes on a fresh database, and a job of host-a's, running until released, under `clientRequestId`. */
  async function jobOfHostA(t: TestContext, database: string, clientRequestId: string) {
    const url = await createDatabase(server().url, database);
    const a = await hostRuntime(t, url, 'host-a');
    const b = await hostRuntime(t, url, 'host-b');
    const { ws } = tempRoot(t);
    const running = nextRecord(a.runtime, (r) => r.state === 'running');
    const { jobId } = await a.runtime.dispatch({
      clientRequestId,
      workspace: ws,
      run: untilReleased,
      timeoutMs: 60_000,
    });
    return { url, a, b, ws, jobId, running: await running };
  }

  it("finds Runtime A's job from Runtime B by its exact clientRequestId, never by a prefix, and B's dispatch of that request starts nothing", async (t) => {
    const url = await createDatabase(server().url, 'find');
    const a = await hostRuntime(t, url, 'host-a');
    const b = await hostRuntime(t, url, 'host-b');
    const { ws } = tempRoot(t);
    const request = { clientRequestId: 'task-1/a1/g1/run', workspace: ws, run: sh('printf hi'), timeoutMs: 20_000 };
    const { jobId } = await a.runtime.dispatch(request);

    const found = await b.runtime.findJobs({ clientRequestId: 'task-1/a1/g1/run' });
    assert.deepEqual(
      found.map((j) => [j.jobId, j.clientRequestId, j.executor.pid]),
      [[jobId, 'task-1/a1/g1/run', process.pid]],
    );
    for (const prefix of ['task-1/a1/g1', 'task-1/a1/g1/ru', 'task-1/'])
      assert.deepEqual(await b.runtime.findJobs({ clientRequestId: prefix }), [], prefix);
    assert.equal((await b.runtime.getJob(jobId)).jobId, jobId);

    const again = await b.runtime.dispatch(request);
    assert.deepEqual(again, { jobId, existing: true }, 'host-b answered with host-a’s job');
    await assert.rejects(b.runtime.dispatch({ ...request, run: sh('printf other') }), (e) =>
      isRuntimeError(e, 'idempotency_conflict'),
    );
    const rows = await sql(url, `SELECT job_id, host_id FROM ordivon_jobs WHERE client_request_id = $1`, [
      request.clientRequestId,
    ]);
    assert.deepEqual(rows.rows, [{ job_id: jobId, host_id: 'host-a' }]);
    assert.deepEqual(
      (await b.runtime.findJobs({ clientRequestId: request.clientRequestId })).map((j) => j.jobId),
      [jobId],
      'host-b holds no job of its own under the request',
    );
  });

  it("while host-a's heartbeat is current, host-b's observe waits for the job and resolves with host-a's terminal record", async (t) => {
    const { a, b, ws, jobId } = await jobOfHostA(t, 'live', 'task-2/a1/g1/run');
    const observing = b.runtime.observe(jobId);
    // host-b looked at host-a twice and found it alive: it keeps waiting, it abandons nothing.
    await Promise.race([b.log.untilAlive('host-a', 2), settledEarly(observing)]);
    assert.equal((await b.runtime.getJob(jobId)).state, 'running');

    writeFileSync(join(ws, 'release'), '');
    const observed = await observing;
    assert.equal(observed.state, 'succeeded');
    assert.equal(observed.exitCode, 0);
    assert.equal(observed.stdout?.tail, 'released');
    assert.deepEqual(observed, await a.runtime.getJob(jobId), 'host-b resolved with host-a’s own terminal record');
    assert.deepEqual(
      b.log.answers.filter((x) => !x.alive),
      [],
    );
  });

  it("after host-a's heartbeat expired, host-b's observe records the job abandoned (executor_gone, processes not checked) and host-a's later stop does not overwrite it", async (t) => {
    const { url, a, b, jobId, running } = await jobOfHostA(t, 'gone', 'task-3/a1/g1/run');
    const group = running.process!.pid;
    const observing = b.runtime.observe(jobId);
    await Promise.race([b.log.untilAlive('host-a', 1), settledEarly(observing)]);

    await expireHeartbeat(url, 'host-a');
    const abandoned = await observing;
    assert.equal(abandoned.jobId, jobId);
    assert.equal(abandoned.state, 'abandoned');
    assert.deepEqual(
      [abandoned.stopReason, abandoned.groupGone, abandoned.exitCode, abandoned.signal],
      ['executor_gone', false, null, null],
    );
    assert.equal(abandoned.abandonedBy?.hostId, 'host-b');
    assert.match(abandoned.abandonedBy?.detail ?? '', /host-a stopped heartbeating; its processes were not checked/);
    assert.deepEqual(
      await jobRows(url, jobId),
      [['host-a', true, abandoned]],
      'the registry row is the abandoned record, still under host-a',
    );
    // On one machine here, but nothing on host-b touched host-a's processes.
    assert.equal(killZero(-group), 'alive');
    assert.deepEqual(await b.runtime.findJobs({ clientRequestId: 'task-3/a1/g1/run' }), [abandoned]);

    // host-a stops its job (its own terminal record): the first terminal record in the registry stays.
    const closedRecord = nextRecord(a.runtime, (r) => isTerminal(r.state));
    await a.runtime.close();
    assert.equal((await closedRecord).stopReason, 'runtime_closed');
    assert.deepEqual(await b.runtime.getJob(jobId), abandoned);
  });

  it('a registry row that does not parse is record_corrupt, naming the job', async (t) => {
    const url = await createDatabase(server().url, 'corrupt');
    const a = await hostRuntime(t, url, 'host-a');
    const b = await hostRuntime(t, url, 'host-b');
    const { ws } = tempRoot(t);
    const { jobId } = await a.runtime.dispatch({
      clientRequestId: 'task-4/a1/g1/run',
      workspace: ws,
      run: sh('true'),
      timeoutMs: 20_000,
    });
    await a.runtime.observe(jobId);
    await sql(url, `UPDATE ordivon_jobs SET record = '{"v":1,"jobId":"${jobId}"}' WHERE job_id = $1`, [jobId]);
    await assert.rejects(
      b.runtime.findJobs({ clientRequestId: 'task-4/a1/g1/run' }),
      (e) => isRuntimeError(e, 'record_corrupt') && /task-4\/a1\/g1\/run/.test(e.message),
    );
    await assert.rejects(
      b.runtime.observe(jobId),
      (e) => isRuntimeError(e, 'record_corrupt') && e.message.includes(jobId),
    );
  });

  it('a dispatch the registry cannot take rejects registry_unavailable, ends failed without spawning, answers that job for its clientRequestId, and reaches the registry once it is back', async (t) => {
    const url = await createDatabase(server().url, 'unreachable');
    const { state, ws } = tempRoot(t);
    const history = await PgHistory.open({ url, hostId: 'host-x', leaseMs: 600_000, poolSize: 2 });
    // As a Host's Runtime is before its Supervisor joined the cluster: no history yet.
    let joined: PgHistory | undefined;
    const runtime = await createRuntime({ root: state, registry: sharedJobRegistry('host-x', () => joined) });
    t.after(async () => {
      await runtime.close();
      await history.close();
    });
    const ended = nextRecord(runtime, (r) => isTerminal(r.state));
    const request = {
      clientRequestId: 'task-5/a1/g1/run',
      workspace: ws,
      run: sh('printf ran > ran.txt'),
      timeoutMs: 20_000,
    };
    await assert.rejects(runtime.dispatch(request), (e) => isRuntimeError(e, 'registry_unavailable') && e.retryable);
    const failed = await ended;
    assert.equal(failed.state, 'failed');
    assert.equal(failed.error?.code, 'registry_unavailable');
    assert.equal(failed.process, undefined, 'nothing was spawned');
    assert.deepEqual(failed.files?.changed, []);
    assert.deepEqual(await runtime.dispatch(request), { jobId: failed.jobId, existing: true });
    await assert.rejects(runtime.findJobs({ clientRequestId: request.clientRequestId }), (e) =>
      isRuntimeError(e, 'registry_unavailable'),
    );

    joined = history;
    assert.deepEqual(await runtime.findJobs({ clientRequestId: request.clientRequestId }), [failed]);
    assert.deepEqual(await jobRows(url, failed.jobId), [['host-x', true, failed]]);
  });
});
