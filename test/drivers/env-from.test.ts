import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createDriverPool, type DriverPool } from '../../drivers/pool.js';
import { EventLog, shRun, workspace } from '../fixtures/drivers/run-inputs.js';

const ws = workspace();
after(() => ws.dispose());

/** A variable name of this test process alone. */
const NAME = `ORDIVON_ENV_FROM_TEST_${process.pid}`;

/** Prints whether the variable arrived and, if so, its length (never the value). */
const report = `if [ -n "\${${NAME}+x}" ]; then echo "set \${#${NAME}}"; else echo unset; fi`;

describe('envFrom through the driver pool', () => {
  const log = new EventLog();
  let pool: DriverPool;
  before(() => {
    // One thread, so every run below lands on the thread that existed before the variable was set.
    pool = createDriverPool({ minThreads: 1, maxThreads: 1, onEvent: log.push });
  });
  after(async () => {
    delete process.env[NAME];
    await pool.close();
  });

  it('reads the value on the worker at spawn time, also for a thread created before the variable was set', async () => {
    const first = await pool.run(shRun(ws.dir, report));
    assert.equal(first.ok && first.receipt.finalText, 'unset', 'a variable not named in envFrom is not inherited');
    const thread = log.of('run_started').at(-1)!.threadId;

    const secret = randomBytes(24).toString('hex');
    process.env[NAME] = secret;
    const second = await pool.run(shRun(ws.dir, report, { envFrom: [NAME] }));
    assert.equal(log.of('run_started').at(-1)!.threadId, thread, 'the same warm thread ran it');
    assert.equal(second.ok && second.receipt.finalText, `set ${secret.length}`);
    assert.equal(JSON.stringify(second).includes(secret), false, 'the result carries no value');
  });

  it('refuses a variable that is not set: spawn_failed, env_missing at envFrom.<i>, nothing spawned', async () => {
    const spawned = log.of('child_spawned').length;
    process.env[NAME] = 'set';
    const result = await pool.run(shRun(ws.dir, report, { envFrom: [NAME, `${NAME}_UNSET`] }));
    assert.deepEqual(result.ok ? result : { kind: result.kind, code: result.code, path: result.path }, {
      kind: 'spawn_failed',
      code: 'env_missing',
      path: 'envFrom.1',
    });
    assert.equal(log.of('child_spawned').length, spawned);
  });

  it('refuses a name that env also sets: invalid_input at envFrom.<i>', async () => {
    const result = await pool.run(shRun(ws.dir, report, { envFrom: ['PATH'], env: { PATH: '/bin' } }));
    assert.deepEqual(result.ok ? result : { kind: result.kind, code: result.code, path: result.path }, {
      kind: 'invalid_input',
      code: 'invalid_input',
      path: 'envFrom.0',
    });
  });
});
