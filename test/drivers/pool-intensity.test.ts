import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createDriverPool, type DriverPool } from '../../drivers/pool.js';
import type { DriverRunInputIn } from '../../drivers/receipt.js';
import { RestartIntensity } from '../../drivers/restart-intensity.js';
import { ManualClock } from '../fixtures/drivers/manual-clock.js';
import { EventLog, shRun, workspace } from '../fixtures/drivers/run-inputs.js';

const crashWorker = new URL('../fixtures/drivers/crash-worker.js', import.meta.url);
const ws = workspace();
after(() => ws.dispose());

function scripted(mode: string): DriverRunInputIn {
  const input = shRun(ws.dir, 'echo fine', { driver: 'codex' });
  input.env = { ...input.env, FIXTURE_MODE: mode };
  return input;
}

const N = 2;
const T = 60_000;

function supervisedPool(clock: ManualClock, log: EventLog): DriverPool {
  return createDriverPool({
    workerFile: crashWorker,
    minThreads: 1,
    maxThreads: 1,
    clock,
    intensity: { maxRestarts: N, withinMs: T },
    backoff: { initialMs: 100, maxMs: 150 },
    onEvent: log.push,
  });
}

/** Runs `input`, first advancing the clock through the backoff the pool announces for it, if any. */
async function runThroughBackoff(pool: DriverPool, clock: ManualClock, log: EventLog, input: DriverRunInputIn) {
  const running = pool.run(input);
  const gate = await Promise.race([log.waitFor('backoff', (e) => e.runId === input.runId), running]);
  if ('type' in gate) {
    assert.equal(
      log.of('run_started').some((e) => e.runId === input.runId),
      false,
      'no dispatch before the backoff elapsed',
    );
    clock.advance(gate.waitMs);
  }
  return running;
}

describe('restart intensity per driver kind', () => {
  it('makes a kind unavailable after N+1 crashes within T, with exponential backoff, while other kinds still run', async () => {
    const clock = new ManualClock();
    const log = new EventLog();
    const pool = supervisedPool(clock, log);
    try {
      for (let i = 0; i <= N; i++) {
        const result = await runThroughBackoff(pool, clock, log, scripted(i === 1 ? 'exit' : 'throw'));
        assert.equal(result.ok || result.kind, 'driver_crashed', `crash ${i + 1}`);
      }
      assert.deepEqual(
        log.of('backoff').map((e) => e.waitMs),
        [100, 150],
        'backoff doubles from initialMs and is capped at maxMs',
      );
      assert.equal(log.of('run_crashed').at(-1)?.tripped, true);

      const refused = await pool.run(scripted('none'));
      assert.equal(refused.ok, false);
      if (refused.ok) return;
      assert.equal(refused.kind, 'driver_unavailable');
      assert.equal(refused.code, 'restart_intensity_exceeded');
      assert.equal(refused.retryable, false);
      assert.match(
        refused.detail,
        /driver 'codex' is unavailable: 3 crashes within 60000 ms exceeded its restart intensity \(at most 2\)/,
      );
      assert.match(refused.detail, /reset\('codex'\)/);

      const other = await pool.run(shRun(ws.dir, 'echo still serving'));
      assert.equal(other.ok && other.receipt.finalText, 'still serving');
      const acp = await pool.run({ ...scripted('none'), driver: 'acp' });
      assert.equal(acp.ok, true, JSON.stringify(acp));

      assert.ok(pool.stats().drivers.codex.unavailableUntil !== null);
      clock.advance(T);
      const reopened = await pool.run(scripted('none'));
      assert.equal(reopened.ok, true, JSON.stringify(reopened));
      assert.equal(pool.stats().drivers.codex.crashesInWindow, 0);
    } finally {
      await pool.close();
    }
  });

  it('reopens a tripped kind on reset(kind)', async () => {
    const clock = new ManualClock();
    const log = new EventLog();
    const pool = supervisedPool(clock, log);
    try {
      for (let i = 0; i <= N; i++) await runThroughBackoff(pool, clock, log, scripted('throw'));
      assert.equal((await pool.run(scripted('none'))).ok, false);
      pool.reset('codex');
      const result = await pool.run(scripted('none'));
      assert.equal(result.ok, true, JSON.stringify(result));
    } finally {
      await pool.close();
    }
  });

  it('does not trip when the crashes are spread wider than the window', async () => {
    const clock = new ManualClock();
    const log = new EventLog();
    const pool = supervisedPool(clock, log);
    try {
      for (let i = 0; i < 2 * (N + 1); i++) {
        const result = await pool.run(scripted('throw'));
        assert.equal(result.ok || result.kind, 'driver_crashed', `crash ${i + 1} is a crash, not a refusal`);
        clock.advance(T / 2);
      }
      assert.equal(log.of('driver_unavailable').length, 0);
    } finally {
      await pool.close();
    }
  });

  it('returns aborted for a run cancelled while it waits out a backoff', async () => {
    const clock = new ManualClock();
    const log = new EventLog();
    const pool = supervisedPool(clock, log);
    try {
      await pool.run(scripted('throw'));
      const controller = new AbortController();
      const input = scripted('none');
      const running = pool.run(input, { signal: controller.signal });
      await log.waitFor('backoff', (e) => e.runId === input.runId);
      controller.abort(new Error('no longer wanted'));
      const result = await running;
      assert.equal(result.ok || result.kind, 'aborted');
      assert.match(result.ok ? '' : result.detail, /no longer wanted/);
      assert.equal(
        log.of('run_started').some((e) => e.runId === input.runId),
        false,
      );
    } finally {
      await pool.close();
    }
  });
});

describe('RestartIntensity', () => {
  it('computes min(initial·2^(c−1), max) after the c-th crash and forgets crashes older than the window', () => {
    const clock = new ManualClock(0);
    const intensity = new RestartIntensity({
      maxRestarts: 10,
      withinMs: 1_000,
      backoff: { initialMs: 10, maxMs: 50 },
      clock,
    });
    const waits: number[] = [];
    for (let c = 1; c <= 5; c++) {
      intensity.recordCrash('acp');
      const gate = intensity.gate('acp');
      assert.equal(gate.state, 'open');
      if (gate.state === 'open') waits.push(gate.waitMs);
    }
    assert.deepEqual(waits, [10, 20, 40, 50, 50]);
    clock.advance(1_000);
    assert.deepEqual(intensity.gate('acp'), { state: 'open', waitMs: 0, crashesInWindow: 0 });
  });

  it('trips only on the crash that exceeds maxRestarts, and only for that kind', () => {
    const clock = new ManualClock(0);
    const intensity = new RestartIntensity({
      maxRestarts: 1,
      withinMs: 100,
      backoff: { initialMs: 0, maxMs: 0 },
      clock,
    });
    assert.equal(intensity.recordCrash('codex'), false);
    assert.equal(intensity.recordCrash('codex'), true);
    assert.equal(intensity.gate('codex').state, 'unavailable');
    assert.equal(intensity.gate('command').state, 'open');
    clock.advance(99);
    assert.equal(intensity.gate('codex').state, 'unavailable');
    clock.advance(1);
    assert.equal(intensity.gate('codex').state, 'open');
  });
});
