import * as crypto from 'node:crypto';

/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, `undefined` members dropped,
 * non-finite numbers refused. Two equal values always give the same bytes, so digests are stable.
 *
 * This is the reference writer; `canonicalJsonFast` gives the same bytes faster and is what
 * digests use (test/recovery/digest.test.ts checks the two against each other).
 */
export function canonicalJson(value: unknown): string {
  return write(value);
}

function write(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot hold ${value}`);
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return '[' + value.map((v) => (v === undefined ? 'null' : write(v))).join(',') + ']';
      const keys = Object.keys(value as object).sort();
      let out = '{';
      let first = true;
      for (const key of keys) {
        const member = (value as Record<string, unknown>)[key];
        if (member === undefined) continue;
        out += (first ? '' : ',') + JSON.stringify(key) + ':' + write(member);
        first = false;
      }
      return out + '}';
    }
    default:
      throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
  }
}

// `crypto.hash` (Node ≥ 20.12) is a one-shot digest about twice as fast as `createHash` for short inputs.
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Uint8Array) => string }).hash;

/** `sha256:<hex>` of a UTF-8 string. */
export function sha256Text(text: string): string {
  return 'sha256:' + (oneShot ? oneShot('sha256', text) : crypto.createHash('sha256').update(text).digest('hex'));
}

/** `sha256:<hex>` of bytes. */
export function sha256Bytes(bytes: Uint8Array): string {
  return 'sha256:' + (oneShot ? oneShot('sha256', bytes) : crypto.createHash('sha256').update(bytes).digest('hex'));
}

/** `sha256:<hex>` of the given bytes or string (UTF-8). */
export function sha256(data: string | Uint8Array): string {
  return typeof data === 'string' ? sha256Text(data) : sha256Bytes(data);
}

/** The digest that names a JSON value: sha256 of its canonical JSON. */
export function digestOf(value: unknown): string {
  return sha256Text(canonicalJsonFast(value));
}

const quotedNames = new Map<string, string>();

function quote(name: string): string {
  let quoted = quotedNames.get(name);
  if (quoted === undefined) {
    quoted = JSON.stringify(name);
    if (quotedNames.size < 10_000) quotedNames.set(name, quoted);
  }
  return quoted;
}

/**
 * Same bytes as `canonicalJson(value)` for values without sparse arrays (anything parsed from
 * JSON, msgpack or zod): sorted member names by code unit, no whitespace, undefined members
 * dropped, undefined array items as null; throws TypeError for non-finite numbers, bigints,
 * functions, symbols. About twice as fast: an insertion sort of the few keys of each object
 * instead of `Array.prototype.sort`, memoized quoting of member names (they repeat).
 */
export function canonicalJsonFast(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot hold ${value}`);
      return '' + value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        if (value.length === 0) return '[]';
        let out = '[' + (value[0] === undefined ? 'null' : canonicalJsonFast(value[0]));
        for (let i = 1; i < value.length; i++)
          out += ',' + (value[i] === undefined ? 'null' : canonicalJsonFast(value[i]));
        return out + ']';
      }
      const keys = Object.keys(value);
      // Insertion sort: same order as `keys.sort()` (code units), faster for a handful of keys.
      for (let i = 1; i < keys.length; i++) {
        const key = keys[i]!;
        let j = i - 1;
        while (j >= 0 && keys[j]! > key) {
          keys[j + 1] = keys[j]!;
          j--;
        }
        keys[j + 1] = key;
      }
      let out = '{';
      let first = true;
      for (const key of keys) {
        const member = (value as Record<string, unknown>)[key];
        if (member === undefined) continue;
        out += (first ? '' : ',') + quote(key) + ':' + canonicalJsonFast(member);
        first = false;
      }
      return out + '}';
    }
    default:
      throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
  }
}

export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;
