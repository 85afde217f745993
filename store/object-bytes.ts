import { canonicalJsonFast, digestOf, sha256Bytes, sha256Text } from './canonical.js';
import { StoredObject } from './records.js';

/**
 * How an object is kept: the UTF-8 bytes of its canonical JSON `{"body":…,"kind":…}`, exactly the
 * bytes its digest is taken of. Checking an object's integrity is then one sha256 over the stored
 * bytes: no decoding and no re-serialization (recovery does this for every object an event names).
 *
 * Roots written before this layout hold objects as msgpack maps; they read the same (their digest
 * is checked the old way: decode, canonical JSON, sha256). Canonical JSON of an object always
 * starts with `{`, which no msgpack map does, so the first byte tells the two apart.
 */
export type RawObject =
  /** Canonical JSON bytes (this layout). */
  | { bytes: Uint8Array }
  /** Canonical JSON text (the SQLite peer keeps objects as TEXT). */
  | { text: string }
  /** A value decoded from an older layout. */
  | { value: unknown };

const OPEN_BRACE = 0x7b;

/** True when stored bytes are in this layout (canonical JSON), false for an older msgpack value. */
export function isCanonicalObjectBytes(bytes: Uint8Array): boolean {
  return bytes.length > 0 && bytes[0] === OPEN_BRACE;
}

/** The canonical JSON text of `{kind, body}` and its digest. */
export function objectText(value: StoredObject): { text: string; digest: string } {
  const text = canonicalJsonFast(value);
  return { text, digest: sha256Text(text) };
}

/** True when the stored object is the one `digest` names. Never throws. */
export function objectMatches(raw: RawObject, digest: string): boolean {
  try {
    if ('bytes' in raw) return sha256Bytes(raw.bytes) === digest;
    if ('text' in raw) return sha256Text(raw.text) === digest;
    const parsed = StoredObject.safeParse(raw.value);
    return parsed.success && digestOf(parsed.data) === digest;
  } catch {
    return false;
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The stored `{kind, body}`, or undefined when it is not one (bad UTF-8, bad JSON, wrong shape). */
export function objectValue(raw: RawObject): StoredObject | undefined {
  let value: unknown;
  try {
    value = 'bytes' in raw ? JSON.parse(decoder.decode(raw.bytes)) : 'text' in raw ? JSON.parse(raw.text) : raw.value;
  } catch {
    return undefined;
  }
  const parsed = StoredObject.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
