import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, `undefined` members dropped,
 * non-finite numbers refused. Two equal values always give the same bytes, so digests are stable.
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

/** `sha256:<hex>` of the given bytes or string (UTF-8). */
export function sha256(data: string | Uint8Array): string {
  return 'sha256:' + createHash('sha256').update(data).digest('hex');
}

/** The digest that names a JSON value: sha256 of its canonical JSON. */
export function digestOf(value: unknown): string {
  return sha256(canonicalJson(value));
}

export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;
