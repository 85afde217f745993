import assert from 'node:assert/strict';
import type { CodedError } from '../../base/index.js';

/** The `type` error, with `code`, a promise rejects with (fails if it resolves or rejects with anything else). */
export async function rejectsWith<E extends CodedError>(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
  code: E['code'],
): Promise<E> {
  const error = await promise.then(
    (value) => assert.fail(`resolved ${JSON.stringify(value)}, expected ${code}`),
    (error: unknown) => error,
  );
  assert.ok(error instanceof type, String(error));
  assert.equal(error.code, code, error.message);
  return error;
}
