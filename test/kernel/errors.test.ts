import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HostError, bootErrorOf, hostErrorOf, isHostErrorCode } from '../../kernel/errors.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { STORE_ERROR_CODES, StoreError } from '../../store/index.js';
import { tempDir } from '../support/temp.js';

describe('HostError conversions', () => {
  it("gives every store code a Host code, carrying the store error's message, path and retryability", () => {
    for (const code of STORE_ERROR_CODES) {
      const store = new StoreError(code, `a ${code}`, { root: '/r' }, { path: 'body.x', retryable: true });
      const host = hostErrorOf(store, { findings: [{ code: 'object_missing', message: 'gone' }] });
      assert.ok(host instanceof HostError);
      assert.ok(isHostErrorCode(host.code), code);
      assert.deepEqual(host.toData(), { code: host.code, message: `a ${code}`, path: 'body.x', retryable: true });
      assert.equal(host.cause, store);
      assert.deepEqual(host.findings, [{ code: 'object_missing', message: 'gone' }]);
    }
  });

  it('turns what a boot step threw into a HostError: itself, a store failure converted, a defect boot_failed', () => {
    const own = new HostError('not_serving', 'stopped', { retryable: true });
    assert.equal(bootErrorOf(own), own);
    const locked = bootErrorOf(new StoreError('state_locked', 'held', {}, { retryable: true }));
    assert.deepEqual([locked.code, locked.retryable], ['state_locked', true]);
    const defect = new TypeError('x is undefined');
    const failed = bootErrorOf(defect);
    assert.deepEqual([failed.code, failed.message, failed.cause], ['boot_failed', 'x is undefined', defect]);
  });

  it("start() rejects with the step's HostError, and the supervisor's failure says the same", async () => {
    const root = tempDir();
    const first = createSupervisor({ state: root });
    await first.start();
    const second = createSupervisor({ state: root });
    try {
      const error = await second.start().then(
        () => assert.fail('a second supervisor started on a held root'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof HostError);
      assert.equal(error.code, 'state_locked');
      assert.deepEqual(
        error.findings.map((f) => f.code),
        ['state_locked'],
      );
      assert.deepEqual([second.failure?.code, second.failure?.message], [error.code, error.message]);
    } finally {
      await first.stop();
    }
  });

  it('names the option that does not parse as a field', () => {
    assert.throws(
      () => createSupervisor({ state: tempDir(), checkpointEvery: -1 }),
      (e) => e instanceof HostError && e.code === 'invalid_option' && e.path === 'checkpointEvery',
    );
  });
});
