import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCommand } from '../../drivers/command/index.js';
import { createDriverPool, type DriverPool } from '../../drivers/pool.js';
import { DriverRunInput } from '../../drivers/receipt.js';
import {
  RUN_GUARD_MARGIN_MS,
  driverBoundMs,
  harnessJobTimeoutMs,
  watchdogBoundMs,
} from '../../drivers/run-deadline.js';
import { POOL_DEFAULTS } from '../../drivers/pool-options.js';
import { runningInGroup } from '../fixtures/drivers/proc.js';
import { shRun, workspace } from '../fixtures/drivers/run-inputs.js';

const ws = workspace();
after(() => ws.dispose());
const never = new AbortController().signal;

// The child's own intervals are real (the boundary is a real process); the assertions are outcomes only.
const SILENT = 'echo $$ > silent.pid; exec sleep 100000';
const CHATTY = 'i=0; while [ $i -lt 30 ]; do echo "step $i"; i=$((i + 1)); sleep 0.1; done; echo done';

describe('the heartbeat of a command run', () => {
  it('ends a child that prints nothing and never exits with heartbeat_timeout, long before its deadline, and stops its group', async () => {
    const input = DriverRunInput.parse(shRun(ws.dir, SILENT, { heartbeatMs: 300, timeoutMs: 600_000 }));
    const result = await runCommand(input, never);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.kind, 'timeout');
    assert.equal(result.code, 'heartbeat_timeout');
    assert.equal(result.retryable, true);
    assert.equal(result.receipt?.stopReason, 'heartbeat_timeout');
    assert.match(result.detail, /printed nothing for 300 ms/);
    const pid = Number(readFileSync(join(ws.dir, 'silent.pid'), 'utf8'));
    assert.deepEqual(runningInGroup(pid), []);
  });

  it('lets a child that keeps printing within the interval run to its own exit, past the interval', async () => {
    const input = DriverRunInput.parse(shRun(ws.dir, CHATTY, { heartbeatMs: 2_000, timeoutMs: 600_000 }));
    const result = await runCommand(input, never);
    assert.equal(result.ok, true, JSON.stringify(result));
    if (!result.ok) return;
    assert.equal(result.receipt.stopReason, 'exited');
    assert.equal(result.receipt.exitCode, 0);
    assert.equal(result.receipt.counts.messages, 31);
    assert.equal(result.receipt.finalText, 'done');
  });

  it('keeps only the deadline when no heartbeat is configured', async () => {
    const input = DriverRunInput.parse(shRun(ws.dir, 'exec sleep 100000', { timeoutMs: 300 }));
    const result = await runCommand(input, never);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.code, 'command_timeout');
  });
});

describe('the heartbeat through the driver pool', () => {
  let pool: DriverPool;
  before(() => {
    pool = createDriverPool({ minThreads: 1, maxThreads: 1 });
  });
  after(() => pool.close());

  it('carries heartbeatMs to the worker, which ends a silent child with heartbeat_timeout', async () => {
    const result = await pool.run(shRun(ws.dir, 'exec sleep 100000', { heartbeatMs: 300, timeoutMs: 600_000 }));
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.code, 'heartbeat_timeout');
  });
});

describe("a harness run's one deadline", () => {
  it('nests every guard outside the driver one margin past the bound inside it', () => {
    const run = { timeoutMs: 600_000, graceMs: 2_000 };
    assert.equal(POOL_DEFAULTS.watchdogMs, RUN_GUARD_MARGIN_MS);
    assert.equal(driverBoundMs(run), run.timeoutMs + run.graceMs);
    assert.equal(watchdogBoundMs(run), driverBoundMs(run) + RUN_GUARD_MARGIN_MS);
    assert.equal(harnessJobTimeoutMs(run), watchdogBoundMs(run) + RUN_GUARD_MARGIN_MS);
  });
});
