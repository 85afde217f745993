import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCodedError } from '../../base/index.js';
import { ACP_FAILURE_CODES, ACP_LAUNCH_CODES, AcpRunError } from '../../drivers/acp/index.js';
import { CODEX_FAILURE_CODES, CodexLaunchError } from '../../drivers/codex/index.js';
import {
  COMMAND_FAILURE_CODES,
  LOOP_FAILURE_CODES,
  DRIVER_ERROR_CODES,
  DRIVER_FAILURE_CODES,
  DriverError,
  DriverResult,
  POOL_FAILURE_CODES,
  RUN_LIMIT_CODES,
  driverFailure,
} from '../../drivers/index.js';
import { DOCUMENTED_CODES } from '../reliability/documented-codes.js';

describe('a failed DriverResult as data', () => {
  it('carries the coarse kind, the specific code and the path as fields, the detail without a code', () => {
    const failure = driverFailure('invalid_input', 'invalid_input', 'invalid driver run input: timeoutMs: too small', {
      path: 'timeoutMs',
    });
    assert.deepEqual(failure, {
      ok: false,
      kind: 'invalid_input',
      code: 'invalid_input',
      retryable: false,
      detail: 'invalid driver run input: timeoutMs: too small',
      path: 'timeoutMs',
    });
    assert.deepEqual(DriverResult.parse(failure), failure);
    const timeout = driverFailure('timeout', 'acp_timeout', 'no answer within 10 ms');
    assert.equal(timeout.retryable, DRIVER_FAILURE_CODES.timeout.retryable);
    assert.equal(driverFailure('timeout', 'codex_timeout', 'x', { retryable: false }).retryable, false);
  });

  it('reads a failure stored before codes existed with its kind as the code', () => {
    const stored = {
      ok: false,
      kind: 'process_exited',
      retryable: true,
      detail: 'acp_process_exited: the agent exited',
    };
    const parsed = DriverResult.parse(stored);
    assert.equal(parsed.ok === false && parsed.code, 'process_exited');
    assert.equal(DriverResult.safeParse({ ...stored, code: '' }).success, false);
  });

  it('documents every kind and every specific code in the error table (docs/errors.md)', () => {
    const codes = [
      ...Object.keys(DRIVER_FAILURE_CODES),
      ...Object.keys(DRIVER_ERROR_CODES),
      ...Object.keys(POOL_FAILURE_CODES),
      ...Object.keys(RUN_LIMIT_CODES),
      ...Object.keys(COMMAND_FAILURE_CODES),
      ...Object.keys(LOOP_FAILURE_CODES),
      ...Object.keys(CODEX_FAILURE_CODES),
      ...ACP_FAILURE_CODES,
      ...ACP_LAUNCH_CODES,
    ];
    assert.deepEqual(
      codes.filter((code) => !DOCUMENTED_CODES.has(code)),
      [],
    );
  });
});

describe("the drivers' thrown errors", () => {
  it('are coded errors whose message does not repeat the code', () => {
    const errors = [
      new DriverError('invalid_pool_options', 'maxThreads: too small', { path: 'maxThreads' }),
      new CodexLaunchError('invalid_launch_config', 'home: must be an absolute path', { path: 'home' }),
      new AcpRunError('acp_protocol_version', 'agent answered protocolVersion 2'),
    ];
    for (const error of errors) {
      assert.ok(isCodedError(error));
      assert.ok(!error.message.startsWith(error.code), error.message);
      assert.equal(error.retryable, false);
    }
    assert.deepEqual(errors[0]!.toData(), {
      code: 'invalid_pool_options',
      message: 'maxThreads: too small',
      path: 'maxThreads',
      retryable: false,
    });
  });
});
