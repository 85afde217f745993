import { isAbsolute } from 'node:path';
import { FROZEN_TEST_MAX_BYTES, readArtifact } from '../drivers/confine.js';
import { HostError } from './errors.js';
import type { TaskSpec } from '../objects/index.js';

/**
 * Task creation: records the digest of every frozen acceptance test as the workspace seed has it,
 * so verification can prove the tests were not modified. Digests the spec gives must match the
 * seed. Throws `invalid_spec` (with the field) when the seed is not an absolute path, a test
 * cannot be read through the seed's confinement (one over `FROZEN_TEST_MAX_BYTES` included: no
 * verification could read it), or a given digest differs; reads only.
 */
export function pinFrozenTests(spec: TaskSpec): TaskSpec {
  const acceptance = spec.acceptance;
  if (!acceptance || acceptance.frozenTests.length === 0) return spec;
  if (!spec.workspaceSeed || !isAbsolute(spec.workspaceSeed)) {
    throw new HostError(
      'invalid_spec',
      'task spec workspaceSeed: an absolute path is required when acceptance.frozenTests are declared',
      { path: 'workspaceSeed' },
    );
  }
  const digests: Record<string, string> = {};
  for (const test of acceptance.frozenTests) {
    let read;
    try {
      read = readArtifact(spec.workspaceSeed, test, FROZEN_TEST_MAX_BYTES);
    } catch (error) {
      throw new HostError('invalid_spec', `task spec workspaceSeed: ${(error as Error).message}`, {
        path: 'workspaceSeed',
        cause: error,
      });
    }
    if (!read.ok)
      throw new HostError('invalid_spec', `task spec acceptance.frozenTests: ${test}: ${read.code} (${read.detail})`, {
        path: 'acceptance.frozenTests',
      });
    const pinned = acceptance.frozenTestDigests?.[test];
    if (pinned !== undefined && pinned !== read.value.digest) {
      throw new HostError(
        'invalid_spec',
        `task spec acceptance.frozenTestDigests.${test}: the seed's file has ${read.value.digest}`,
        { path: `acceptance.frozenTestDigests.${test}` },
      );
    }
    digests[test] = read.value.digest;
  }
  return { ...spec, acceptance: { ...acceptance, frozenTestDigests: digests } };
}
