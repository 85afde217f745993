import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { eventRecordArb } from '../support/arbitraries.js';
import {
  canonicalEventJson,
  canonicalJsonFast,
  eventDigest,
  fastDigestOf,
  jsonEqual,
  sha256Bytes,
} from '../../recovery/digest.js';
import { EventRecord, canonicalJson, digestOf, sha256 } from '../../store/index.js';

const record = eventRecordArb(40);

/** A deep copy with object keys in reverse order and, sometimes, undefined members added. */
function shuffled(value: unknown, addUndefined: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffled(v, addUndefined));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  // defineProperty, not assignment: a member named "__proto__" must stay an own member.
  for (const key of Object.keys(value).reverse()) {
    Object.defineProperty(out, key, {
      value: shuffled((value as Record<string, unknown>)[key], addUndefined),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  if (addUndefined) out['~absent'] = undefined;
  return out;
}

describe('recovery digests', () => {
  it('gives exactly digestOf for every parsed event record', () => {
    fc.assert(
      fc.property(record, (raw) => {
        const parsed = EventRecord.parse(raw);
        assert.equal(canonicalEventJson(parsed), canonicalJson(parsed));
        assert.equal(eventDigest(parsed), digestOf(parsed));
      }),
      { numRuns: 300 },
    );
  });

  it('writes the canonical JSON of store/canonical for any JSON value, whatever its key order or undefined members', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, addUndefined) => {
        const copy = shuffled(value, addUndefined);
        assert.equal(canonicalJsonFast(copy), canonicalJson(copy));
      }),
      { numRuns: 400 },
    );
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 1n, () => 1]) {
      assert.throws(() => canonicalJsonFast(bad), TypeError);
      assert.throws(() => canonicalJson(bad), TypeError);
    }
  });

  it('hashes values and bytes like store/canonical, and both as sha256 of the reference canonical JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.uint8Array(), fc.string(), (value, bytes, text) => {
        const reference = 'sha256:' + createHash('sha256').update(canonicalJson(value)).digest('hex');
        assert.equal(digestOf(value), reference);
        assert.equal(fastDigestOf(value), reference);
        assert.equal(sha256Bytes(bytes), 'sha256:' + createHash('sha256').update(bytes).digest('hex'));
        assert.equal(sha256Bytes(bytes), sha256(bytes));
        assert.equal(sha256(text), 'sha256:' + createHash('sha256').update(text).digest('hex'));
      }),
      { numRuns: 200 },
    );
  });

  it('compares JSON values exactly as their canonical JSON compares', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), fc.boolean(), (a, b, addUndefined) => {
        const copy = shuffled(a, addUndefined);
        assert.equal(jsonEqual(a, copy), true);
        assert.equal(jsonEqual(a, b), canonicalJson(a) === canonicalJson(b));
      }),
      { numRuns: 400 },
    );
    assert.equal(jsonEqual({ a: [1, undefined] }, { a: [1, null] }), true);
    assert.equal(jsonEqual({ a: 1 }, { a: 1, b: null }), false);
    assert.equal(jsonEqual(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY), false);
  });
});
