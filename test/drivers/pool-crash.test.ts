import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createDriverPool, type DriverPool } from '../../drivers/pool.js';
import type { DriverPoolOptions } from '../../drivers/pool-options.js';
import type { DriverRunInputIn } from '../../drivers/receipt.js';
import { ManualClock } from '../fixtures/drivers/manual-clock.js';
import { processState, runningInGroup } from '../fixtures/drivers/proc.js';
import { EventLog, shRun, workspace } from '../fixtures/drivers/run-inputs.js';

const crashWorker = new URL('../fixtures/drivers/crash-worker.js', import.meta.url);
const ws = workspace();
after(() => ws.dispose());

/** A run of the scripted `codex` stand-in that misbehaves as `mode` says. */
function scripted(mode: string, pidsPath = '/dev/null'): DriverRunInputIn {
  const input = shRun(ws.dir, 'echo fine', { driver: 'codex' });
  input.env = { ...input.env, FIXTURE_MODE: mode, FIXTURE_PIDS: pidsPath };
  return input;
}

function fixturePool(log: EventLog, extra: DriverPoolOptions = {}): DriverPool {
  return createDriverPool({
    workerFile: crashWorker,
    minThreads: 1,
    maxThreads: 1,
    backoff: { initialMs: 0, maxMs: 0 },
    intensity: { maxRestarts: 100, withinMs: 60_000 },
    onEvent: log.push,
    ...extra,
  });
}

function threadOf(log: EventLog, runId: string): number | undefined {
  return log.of('run_started').find((e) => e.runId === runId)?.threadId;
}

describe('a worker thread that dies fails only its run, and the pool goes on', () => {
  it('turns process.exit in the worker into driver_crashed, kills the orphaned tree, and runs the next run on a new thread', async () => {
    const log = new EventLog();
    const pool = fixturePool(log);
    try {
      const pids = join(ws.dir, 'exit.pids');
      const crash = scripted('exit', pids);
      const result = await pool.run(crash);
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.kind, 'driver_crashed');
      assert.equal(result.code, 'worker_died');
      assert.equal(result.retryable, true);
      assert.match(result.detail, /worker exited with code: 7/);
      const [leader, grandchild] = readFileSync(pids, 'utf8').trim().split(' ').map(Number);
      assert.match(result.detail, new RegExp(`killed orphaned process groups ${leader}`));
      assert.deepEqual(runningInGroup(leader!), []);
      assert.notEqual(processState(grandchild!), 'running');

      const next = shRun(ws.dir, 'echo after the crash');
      const ok = await pool.run(next);
      assert.equal(ok.ok && ok.receipt.finalText, 'after the crash');
      assert.notEqual(threadOf(log, next.runId), threadOf(log, crash.runId), 'the dead thread was replaced');
      const stats = pool.stats();
      assert.ok(stats.workersDestroyed >= 1 && stats.workersCreated >= 2, JSON.stringify(stats));
      assert.equal(stats.orphanGroupsKilled, 1);
      assert.equal(stats.crashes, 1);
    } finally {
      await pool.close();
    }
  });

  it('turns an uncaught exception in the worker into driver_crashed and recovers', async () => {
    const log = new EventLog();
    const pool = fixturePool(log);
    try {
      const result = await pool.run(scripted('uncaught'));
      assert.equal(result.ok || result.kind, 'driver_crashed');
      assert.equal(result.ok || result.code, 'worker_died');
      assert.match(result.ok ? '' : result.detail, /scripted uncaught exception/);
      const ok = await pool.run(scripted('none'));
      assert.equal(ok.ok, true, JSON.stringify(ok));
    } finally {
      await pool.close();
    }
  });

  it('turns a worker running out of memory into driver_crashed and recovers', async () => {
    const log = new EventLog();
    const pool = fixturePool(log, { resourceLimits: { maxOldGenerationSizeMb: 48 } });
    try {
      const result = await pool.run(scripted('oom'));
      assert.equal(result.ok || result.kind, 'driver_crashed');
      assert.match(result.ok ? '' : result.detail, /ERR_WORKER_OUT_OF_MEMORY/);
      const ok = await pool.run(scripted('none'));
      assert.equal(ok.ok, true, JSON.stringify(ok));
    } finally {
      await pool.close();
    }
  });

  it('terminates a wedged worker at the watchdog deadline and kills the process tree it started', async () => {
    const log = new EventLog();
    const clock = new ManualClock();
    const pool = fixturePool(log, { clock, watchdogMs: 1_000 });
    try {
      const fifo = join(ws.dir, 'wedge.fifo');
      execFileSync('mkfifo', [fifo]);
      const input = { ...scripted('wedge', fifo), timeoutMs: 5_000, graceMs: 100 };
      const running = pool.run(input);
      const [leader, grandchild] = (await readFile(fifo, 'utf8')).trim().split(' ').map(Number);
      assert.equal(processState(grandchild!), 'running');
      clock.advance(5_000 + 100 + 1_000);
      const result = await running;
      assert.equal(result.ok || result.kind, 'driver_crashed');
      assert.equal(result.ok || result.code, 'worker_watchdog');
      assert.match(result.ok ? '' : result.detail, /terminated by the watchdog/);
      assert.deepEqual(runningInGroup(leader!), []);
      assert.notEqual(processState(grandchild!), 'running');
      const ok = await pool.run(scripted('none'));
      assert.equal(ok.ok, true, JSON.stringify(ok));
    } finally {
      await pool.close();
    }
  });
});

describe('a driver that fails inside a live worker', () => {
  it('turns a thrown exception into driver_crashed and keeps the same thread', async () => {
    const log = new EventLog();
    const pool = fixturePool(log);
    try {
      const crash = scripted('throw');
      const result = await pool.run(crash);
      assert.equal(result.ok || result.kind, 'driver_crashed');
      assert.equal(result.ok || result.retryable, true);
      assert.equal(result.ok || result.code, 'driver_threw');
      assert.match(result.ok ? '' : result.detail, /driver 'codex' threw: scripted driver threw/);
      const next = scripted('none');
      const ok = await pool.run(next);
      assert.equal(ok.ok && ok.receipt.driver, 'codex');
      assert.equal(threadOf(log, next.runId), threadOf(log, crash.runId));
      assert.equal(pool.stats().workersDestroyed, 0);
    } finally {
      await pool.close();
    }
  });

  it('turns a result that is not a DriverResult into driver_crashed naming the bad field', async () => {
    const log = new EventLog();
    const pool = fixturePool(log);
    try {
      const result = await pool.run(scripted('invalid'));
      assert.equal(result.ok || result.kind, 'driver_crashed');
      assert.equal(result.ok || result.code, 'driver_result_invalid');
      assert.equal(result.ok || result.path, 'ok');
      assert.match(result.ok ? '' : result.detail, /returned an invalid result: ok: /);
    } finally {
      await pool.close();
    }
  });
});
