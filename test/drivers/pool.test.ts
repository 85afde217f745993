import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { MessageChannel } from 'node:worker_threads';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createDriverPool, type DriverPool } from '../../drivers/pool.js';
import { DriverError } from '../../drivers/errors.js';
import { subscribeProviderSpawns, type ProviderSpawn } from '../../drivers/provider-spawn.js';
import { createWorkerHandler } from '../../drivers/worker.js';
import { processState, probe, runningInGroup } from '../fixtures/drivers/proc.js';
import { EventLog, shRun, workspace } from '../fixtures/drivers/run-inputs.js';

const ws = workspace();
after(() => ws.dispose());

describe('driver pool with the command driver', () => {
  const log = new EventLog();
  let pool: DriverPool;
  before(() => {
    pool = createDriverPool({ minThreads: 1, maxThreads: 2, onEvent: log.push });
  });
  after(async () => {
    await pool.close();
  });

  it('runs a command on a worker thread and returns its receipt with the artifact digest and final text', async () => {
    const result = await pool.run(
      shRun(ws.dir, 'read -r task; printf "%s" "$task" > answer.txt; echo "thinking"; echo "answer written"', {
        prompt: 'forty-two\n',
        expectedArtifacts: ['answer.txt'],
      }),
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    if (!result.ok) return;
    const digest = 'sha256:' + createHash('sha256').update('forty-two').digest('hex');
    assert.deepEqual(result.receipt.artifacts, [{ name: 'answer.txt', digest, bytes: 9 }]);
    assert.equal(result.receipt.finalText, 'answer written');
    assert.equal(result.receipt.counts.messages, 2);
    assert.equal(result.receipt.driver, 'command');
    assert.equal(log.of('run_started').at(-1)?.runId, result.receipt.runId);
  });

  it('reports the provider it spawns (pid and /proc start time) to onSpawn and on the provider-spawn channel', async () => {
    const published: ProviderSpawn[] = [];
    const unsubscribe = subscribeProviderSpawns((spawn) => published.push(spawn));
    const reported: ProviderSpawn[] = [];
    try {
      // The shell prints its own pid and start time (field 22 of /proc/$$/stat; "sh" has no spaces).
      const input = shRun(ws.dir, 'set -- $(cat /proc/$$/stat); shift 21; echo "$$ $1"', { jobId: 'job-spawn-1' });
      const result = await pool.run(input, { onSpawn: (spawn) => reported.push(spawn) });
      assert.equal(result.ok, true, JSON.stringify(result));
      const [pid, startTicks] = (result.ok ? (result.receipt.finalText ?? '') : '').split(' ').map(Number);
      const expected = { runId: input.runId, jobId: 'job-spawn-1', driver: 'command', pid, startTicks };
      assert.deepEqual(reported, [expected]);
      assert.deepEqual(
        published.filter((s) => s.runId === input.runId),
        [expected],
      );
    } finally {
      unsubscribe();
    }
  });

  it('kills the whole process tree when a run times out, escalating to SIGKILL for a tree that ignores SIGTERM', async () => {
    const input = shRun(ws.dir, 'trap "" TERM; sleep 1000 & echo "$$ $!"; wait', { timeoutMs: 1_500, graceMs: 200 });
    const result = await pool.run(input);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.kind, 'timeout');
    assert.equal(result.code, 'command_timeout');
    assert.equal(result.retryable, true);
    assert.match(result.detail, /SIGKILL after 200 ms grace/);
    assert.equal(result.receipt?.stopReason, 'timeout');
    const [leader, grandchild] = (result.receipt?.finalText ?? '').split(' ').map(Number);
    assert.ok(leader! > 0 && grandchild! > 0, `pids printed by the harness: ${result.receipt?.finalText}`);
    assert.equal(log.of('child_spawned').find((e) => e.runId === input.runId)?.pid, leader);
    // Nothing of the group runs any more. The grandchild, reparented to an init that does not reap
    // (this machine's pid 1), may linger as a zombie: dead, but still answering kill(pid, 0).
    assert.deepEqual(runningInGroup(leader!), []);
    assert.notEqual(processState(grandchild!), 'running');
    assert.equal(processState(leader!), 'gone');
  });

  it('forwards the caller abort into the worker: the driver stops its tree and the thread survives', async () => {
    const fifo = join(ws.dir, 'abort.fifo');
    execFileSync('mkfifo', [fifo]);
    // A harness that stops its own child on SIGTERM and reaps it, so the tree can vanish entirely.
    // The grandchild reports itself once it runs with default signal dispositions (a SIGTERM that
    // lands between fork and exec would be swallowed by the shell's trap and lost).
    const grandchild = `sh -c 'echo "$PPID $$" > ${fifo}; exec sleep 1000'`;
    const script = `trap 'kill $gc 2>/dev/null; wait $gc; exit 143' TERM; ${grandchild} & gc=$!; wait $gc`;
    const controller = new AbortController();
    const destroyedBefore = pool.stats().workersDestroyed;
    const running = pool.run(shRun(ws.dir, script, { graceMs: 5_000 }), { signal: controller.signal });
    const [leader, sleeper] = (await readFile(fifo, 'utf8')).trim().split(' ').map(Number);
    assert.equal(probe(-leader!), 'alive');
    assert.equal(processState(sleeper!), 'running');
    controller.abort(new Error('operator cancelled'));
    const result = await running;
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.kind, 'aborted');
    assert.equal(result.code, 'command_aborted');
    assert.equal(result.retryable, false);
    assert.match(result.detail, /operator cancelled/);
    assert.match(result.detail, /\(SIGTERM\)/);
    assert.equal(probe(-leader!), 'ESRCH');
    assert.equal(probe(sleeper!), 'ESRCH');
    assert.equal(pool.stats().workersDestroyed, destroyedBefore, 'an abort does not terminate the worker thread');
  });

  it('answers invalid input with invalid_input naming the zod path, without reaching a worker', async () => {
    const started = log.of('run_started').length;
    const result = await pool.run({ ...shRun(ws.dir, 'true'), timeoutMs: -5, env: { PATH: 7 } } as never);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.kind, 'invalid_input');
    assert.equal(result.code, 'invalid_input');
    assert.equal(result.path, 'env.PATH', 'the first bad field');
    assert.equal(result.retryable, false);
    assert.match(result.detail, /timeoutMs: /);
    assert.match(result.detail, /env\.PATH: /);
    assert.equal(log.of('run_started').length, started);
  });

  it('returns aborted for a run whose signal fired before it was dispatched', async () => {
    const result = await pool.run(shRun(ws.dir, 'true'), { signal: AbortSignal.abort(new Error('too late')) });
    assert.equal(result.ok || result.kind, 'aborted');
    assert.equal(result.ok || result.code, 'pool_aborted');
  });
});

describe('worker handler (the code inside the thread)', () => {
  it('answers a malformed input with invalid_input and the zod path', async () => {
    const handler = createWorkerHandler();
    const { port1, port2 } = new MessageChannel();
    const result = await handler({ input: { driver: 'telnet', runId: '' }, port: port2 });
    port1.close();
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.kind, 'invalid_input');
    assert.match(result.detail, /driver: /);
    assert.match(result.detail, /runId: /);
  });

  it('answers a task without its port with invalid_input', async () => {
    const result = await createWorkerHandler()({ input: {} });
    assert.equal(result.ok || result.kind, 'invalid_input');
    assert.equal(result.ok || result.code, 'worker_task_invalid');
    assert.equal(result.ok || result.path, 'port');
    assert.match(result.ok ? '' : result.detail, /port: /);
  });
});

describe('pool lifecycle', () => {
  it('measures pool start plus one trivial command run', async (t) => {
    const t0 = performance.now();
    const pool = createDriverPool({ minThreads: 1, maxThreads: 1 });
    const first = await pool.run(shRun(ws.dir, 'true'));
    const t1 = performance.now();
    const second = await pool.run(shRun(ws.dir, 'true'));
    const t2 = performance.now();
    await pool.close();
    t.diagnostic(
      `pool start + first trivial run: ${(t1 - t0).toFixed(1)} ms; next run on the warm thread: ${(t2 - t1).toFixed(1)} ms`,
    );
    assert.equal(first.ok && second.ok, true);
  });

  it('close() aborts a run in flight through its driver and later runs reject pool_closed', async () => {
    const log = new EventLog();
    const pool = createDriverPool({ minThreads: 1, maxThreads: 1, onEvent: log.push });
    const running = pool.run(shRun(ws.dir, 'exec sleep 1000', { graceMs: 5_000 }));
    const { pid } = await log.waitFor('child_spawned');
    await pool.close();
    const result = await running;
    assert.equal(result.ok || result.kind, 'aborted');
    assert.match(result.ok ? '' : result.detail, /driver pool closed/);
    assert.deepEqual(runningInGroup(pid), []);
    await assert.rejects(pool.run(shRun(ws.dir, 'true')), (error: unknown) => {
      assert.ok(error instanceof DriverError);
      assert.equal(error.code, 'pool_closed');
      return true;
    });
  });

  it('rejects invalid pool options with invalid_pool_options and the field path', () => {
    assert.throws(
      () => createDriverPool({ maxThreads: 0 }),
      (error: unknown) =>
        error instanceof DriverError &&
        error.code === 'invalid_pool_options' &&
        error.path === 'maxThreads' &&
        /maxThreads/.test(error.message),
    );
  });
});
