import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Checkpoint, safeParseCheckpoint } from '../../recovery/checkpoint-store.js';
import { TaskSpec } from '../../objects/index.js';
import { SPEC } from '../support/tasks.js';

const digest = fc.stringMatching(/^sha256:[0-9a-f]{64}$/);
const spec = TaskSpec.parse({ ...SPEC, taskId: 'task-a' });
const valid = fc.record(
  {
    revision: fc.integer({ min: 1, max: 1_000_000 }),
    headDigest: digest,
    machineVersion: fc.integer({ min: 1, max: 3 }),
    codeHash: digest,
    state: fc.string(),
    snapshot: fc.dictionary(fc.string(), fc.jsonValue()),
    projectionDigest: digest,
    spec: fc.constant(spec as unknown),
  },
  { requiredKeys: ['revision', 'headDigest', 'machineVersion', 'state', 'snapshot', 'projectionDigest', 'spec'] },
);

const damaged = fc
  .tuple(
    valid,
    fc.constantFrom(
      'revision',
      'headDigest',
      'machineVersion',
      'codeHash',
      'state',
      'snapshot',
      'projectionDigest',
      'spec',
      'extra',
    ),
    fc.anything(),
    fc.boolean(),
  )
  .map(([record, key, value, remove]) => {
    const copy: Record<string, unknown> = { ...record };
    if (remove) delete copy[key];
    else copy[key] = value;
    return copy;
  });

function same(value: unknown): void {
  const fast = safeParseCheckpoint(value);
  const zod = Checkpoint.safeParse(value);
  assert.equal(fast.success, zod.success);
  if (fast.success && zod.success) assert.deepStrictEqual(fast.data, zod.data);
}

describe('safeParseCheckpoint', () => {
  it('gives what Checkpoint.safeParse gives, for valid, damaged and arbitrary values', () => {
    fc.assert(fc.property(valid, same), { numRuns: 500 });
    fc.assert(fc.property(damaged, same), { numRuns: 2_000 });
    fc.assert(fc.property(fc.anything(), same), { numRuns: 500 });
  });

  it('defers edge cases to zod: non-integer or unsafe revisions, special snapshot members, a spec that does not parse', () => {
    const base = {
      revision: 3,
      headDigest: 'sha256:' + 'a'.repeat(64),
      machineVersion: 1,
      state: 'ready',
      snapshot: { value: 'ready' },
      projectionDigest: 'sha256:' + 'b'.repeat(64),
      spec,
    };
    for (const value of [
      { ...base, revision: 1.5 },
      { ...base, revision: 2 ** 53 },
      { ...base, revision: 0 },
      { ...base, snapshot: JSON.parse('{"__proto__": {"x": 1}}') },
      { ...base, snapshot: { constructor: 1 } },
      { ...base, snapshot: [] },
      { ...base, spec: { ...spec, title: 5 } },
      { ...base, spec: undefined },
      Object.assign(Object.create(null), base),
    ]) {
      same(value);
    }
  });
});
