import { z } from 'zod';
import { DIGEST_PATTERN } from './canonical.js';

/** What the store keeps on disk. Every record is parsed with these schemas when it is read. */

export const Digest = z.string().regex(DIGEST_PATTERN, 'expected sha256:<64 hex>');

export const TaskId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'letters, digits, . _ : - (not first)');

/** How an appended event was taken by the statechart: admitted, or retained with a rejection code. */
export const EventDisposition = z.union([
  z.object({ admitted: z.literal(true) }),
  z.object({ admitted: z.literal(false), code: z.string().min(1) }),
]);
export type EventDisposition = z.infer<typeof EventDisposition>;

export const EventRecord = z.object({
  /** Caller-chosen id; an append retried with the same id is acknowledged without writing. */
  id: z.string().min(1).max(200),
  type: z.string().min(1),
  origin: z.enum(['host', 'external']),
  /** Wall-clock time (ISO 8601) and a monotonic reading (ms) taken together, for ordering. */
  at: z.string(),
  mono: z.number(),
  data: z.record(z.string(), z.unknown()),
  /** Object digests this event references; each must exist before the event is written. */
  refs: z.array(Digest),
  disposition: EventDisposition,
  /** Digest of the event at `revision - 1`; null for revision 1. */
  prev: Digest.nullable(),
});
export type EventRecord = z.infer<typeof EventRecord>;

const DIGEST = /^sha256:[0-9a-f]{64}$/;

function plain(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * `EventRecord.safeParse(value)` for the verifier's hot loop: the same result, about 3× faster
 * for the records the store writes. It decides only plainly valid records (plain objects, no
 * symbol, `__proto__` or `constructor` members in `data`) and builds what zod would (known
 * members only, `data` with the same members); anything else — including everything invalid —
 * goes to zod, so errors and edge cases are zod's own. test/store/records.test.ts checks the two
 * against each other on generated values.
 */
export function safeParseEventRecord(value: unknown): { success: true; data: EventRecord } | { success: false } {
  if (plain(value)) {
    const { id, type, origin, at, mono, data, refs, disposition, prev } = value;
    if (
      typeof id === 'string' &&
      id.length >= 1 &&
      id.length <= 200 &&
      typeof type === 'string' &&
      type.length >= 1 &&
      (origin === 'host' || origin === 'external') &&
      typeof at === 'string' &&
      typeof mono === 'number' &&
      Number.isFinite(mono) &&
      plain(data) &&
      Object.getOwnPropertySymbols(data).length === 0 &&
      !Object.hasOwn(data, '__proto__') &&
      !Object.hasOwn(data, 'constructor') &&
      Array.isArray(refs) &&
      refs.every((r) => typeof r === 'string' && DIGEST.test(r)) &&
      plain(disposition) &&
      (prev === null || (typeof prev === 'string' && DIGEST.test(prev)))
    ) {
      const admitted = disposition.admitted;
      const code = disposition.code;
      const taken =
        admitted === true
          ? { admitted: true as const }
          : admitted === false && typeof code === 'string' && code.length >= 1
            ? { admitted: false as const, code }
            : undefined;
      if (taken) {
        const copy: Record<string, unknown> = {};
        for (const key of Object.keys(data)) copy[key] = data[key];
        return {
          success: true,
          data: { id, type, origin, at, mono, data: copy, refs: [...refs] as string[], disposition: taken, prev },
        };
      }
    }
  }
  return EventRecord.safeParse(value);
}

export const Head = z.object({ revision: z.number().int().positive(), digest: Digest });
export type Head = z.infer<typeof Head>;

/**
 * `Head.safeParse(value)` for the append path, which reads the head of every stream it appends
 * to (zod's parse of it was a few percent of an admission's main-thread time): the same result,
 * deciding only plainly valid heads by hand; anything else goes to zod
 * (test/store/records.test.ts compares the two).
 */
export function safeParseHead(value: unknown): { success: true; data: Head } | { success: false } {
  if (plain(value)) {
    const { revision, digest } = value;
    if (Number.isSafeInteger(revision) && (revision as number) > 0 && typeof digest === 'string' && DIGEST.test(digest))
      return { success: true, data: { revision: revision as number, digest } };
  }
  return Head.safeParse(value);
}

export const Projection = z.object({
  revision: z.number().int().positive(),
  machineVersion: z.number().int().positive(),
  state: z.string(),
  /** XState persisted snapshot (`actor.getPersistedSnapshot()`), plain JSON. */
  snapshot: z.record(z.string(), z.unknown()),
});
export type Projection = z.infer<typeof Projection>;

export const StoredObject = z.object({ kind: z.string().min(1), body: z.unknown() });
export type StoredObject = z.infer<typeof StoredObject>;

/** Identity claims kept in the `indexes` database: each (kind, key) belongs to exactly one Task. */
/** `event` maps a caller's idempotency key (`taskId:eventId`) to the revision that took it. */
export const IndexKind = z.enum(['request', 'evidence', 'artifact', 'event']);
export type IndexKind = z.infer<typeof IndexKind>;
/** `digest` (optional) fingerprints what claimed the key, e.g. the caller's event for an idempotency key. */
export const IndexClaim = z.object({ kind: IndexKind, key: z.string().min(1), digest: z.string().optional() });
export type IndexClaim = z.infer<typeof IndexClaim>;
export const IndexEntry = z.object({ revision: z.number().int().positive(), digest: z.string().optional() });
export type IndexEntry = z.infer<typeof IndexEntry>;

export const FORMAT_NAME = 'ordivon-state';
export const FORMAT_VERSION = 1;
export const FormatFile = z.object({ format: z.literal(FORMAT_NAME), version: z.number().int() });

export const StreamWarning = z.object({
  taskId: z.string(),
  revision: z.number().int(),
  threshold: z.number().int(),
  at: z.string(),
});
export type StreamWarning = z.infer<typeof StreamWarning>;
