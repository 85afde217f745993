import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { eventRecordArb } from '../support/arbitraries.js';
import { EventRecord, Head, safeParseEventRecord, safeParseHead } from '../../store/index.js';

const valid = eventRecordArb();

/** One member replaced by something arbitrary, removed, or an extra member added. */
const damaged = fc
  .tuple(
    valid,
    fc.constantFrom('id', 'type', 'origin', 'at', 'mono', 'data', 'refs', 'disposition', 'prev', 'extra'),
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
  const fast = safeParseEventRecord(value);
  const zod = EventRecord.safeParse(value);
  assert.equal(fast.success, zod.success);
  if (fast.success && zod.success) assert.deepStrictEqual(fast.data, zod.data);
}

describe('safeParseEventRecord', () => {
  it('gives what EventRecord.safeParse gives for valid records', () => {
    fc.assert(fc.property(valid, same), { numRuns: 2_000 });
  });

  it('gives what EventRecord.safeParse gives for damaged records and arbitrary values', () => {
    fc.assert(fc.property(damaged, same), { numRuns: 3_000 });
    fc.assert(fc.property(fc.anything(), same), { numRuns: 1_000 });
  });

  it('defers the edge cases to zod: special members of data, non-plain objects, bad dispositions, non-finite numbers', () => {
    const base = {
      id: 'e1',
      type: 't',
      origin: 'host',
      at: 'now',
      mono: 1,
      data: {},
      refs: [],
      disposition: { admitted: true },
      prev: null,
    };
    const cases: unknown[] = [
      { ...base, data: JSON.parse('{"__proto__": {"x": 1}, "a": 1}') },
      { ...base, data: { constructor: 'x' } },
      { ...base, data: { [Symbol('s')]: 1, a: 2 } },
      { ...base, data: new Map([['a', 1]]) },
      { ...base, data: [] },
      { ...base, data: Object.create(null) },
      Object.assign(Object.create(null), base),
      { ...base, disposition: { admitted: false } },
      { ...base, disposition: { admitted: false, code: '' } },
      { ...base, disposition: { admitted: true, code: 'ignored' } },
      { ...base, mono: Number.POSITIVE_INFINITY },
      { ...base, mono: Number.NaN },
      { ...base, id: 'x'.repeat(201) },
      { ...base, refs: ['sha256:' + 'A'.repeat(64)] },
      { ...base, prev: 'sha256:' + '0'.repeat(63) },
      { ...base, extra: 1 },
    ];
    for (const value of cases) same(value);
  });
});

describe('safeParseHead', () => {
  const digest = fc.stringMatching(/^sha256:[0-9a-f]{64}$/);
  const head = fc.record({ revision: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), digest });
  const damagedHead = fc
    .tuple(head, fc.constantFrom('revision', 'digest', 'extra'), fc.anything(), fc.boolean())
    .map(([value, key, replacement, remove]) => {
      const copy: Record<string, unknown> = { ...value };
      if (remove) delete copy[key];
      else copy[key] = replacement;
      return copy;
    });
  const sameHead = (value: unknown) => {
    const fast = safeParseHead(value);
    const zod = Head.safeParse(value);
    assert.equal(fast.success, zod.success);
    if (fast.success && zod.success) assert.deepStrictEqual(fast.data, zod.data);
  };

  it('gives what Head.safeParse gives for valid, damaged and arbitrary values', () => {
    fc.assert(fc.property(head, sameHead), { numRuns: 1_000 });
    fc.assert(fc.property(damagedHead, sameHead), { numRuns: 2_000 });
    fc.assert(fc.property(fc.anything(), sameHead), { numRuns: 1_000 });
    for (const value of [
      { revision: 1.5, digest: 'sha256:' + '0'.repeat(64) },
      { revision: 0, digest: 'sha256:' + '0'.repeat(64) },
      { revision: 2 ** 60, digest: 'sha256:' + '0'.repeat(64) },
      { revision: 1, digest: 'sha256:' + 'A'.repeat(64) },
      Object.assign(Object.create(null), { revision: 1, digest: 'sha256:' + '0'.repeat(64) }),
    ])
      sameHead(value);
  });
});
