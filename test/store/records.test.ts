import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { eventRecordArb } from '../support/arbitraries.js';
import { EventRecord, safeParseEventRecord } from '../../store/index.js';

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
