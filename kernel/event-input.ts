import { z } from 'zod';
import { EXTERNAL_EVENT_TYPES, TASK_EVENTS, type EventOrigin } from '../machines/index.js';
import { nearestKey, strictObject, zodIssue } from '../base/index.js';
import { digestOf } from '../store/index.js';
import type { HostErrorCode } from './errors.js';

/** Caller-chosen idempotency key: a retried send with the same `eventId` is answered as its first delivery was. */
const EventId = z.object({ eventId: z.string().min(1).max(200).optional() });

/** What `EventId.extend(definition.sent.shape)` gives each definition, as a tuple. */
type WithEventId<D extends readonly unknown[]> = {
  -readonly [I in keyof D]: D[I] extends { readonly sent: z.ZodObject<infer Shape> }
    ? z.ZodObject<z.util.Extend<typeof EventId.shape, Shape>, z.core.$strip>
    : never;
};

/**
 * Events as callers send them to a Task (library `send`, CLI `send`, the control API, scripts):
 * each event's `sent` form (machines/task-events.ts) with an optional `eventId`. The kernel adds
 * what only it may know: the revision, the origin, and digests of the objects it writes
 * (assignment, proposal). Host-only types are accepted here so that the allow-list, not a parse
 * error, answers an outsider who sends them (`not_allowed`). An unknown key is refused
 * (`invalid_event` at the key, naming the nearest known one): dropped, a mistyped optional field
 * would leave the event meaning something else than the caller wrote.
 */
export const EventInput = z.discriminatedUnion(
  'type',
  // `Array.map` keeps neither the tuple nor its element types; WithEventId states what `extend` gives each.
  TASK_EVENTS.map((definition) =>
    strictObject({ ...EventId.shape, ...definition.sent.shape }),
  ) as unknown as WithEventId<typeof TASK_EVENTS>,
);
/** The same events with unknown keys dropped: what the Host's own components send (`origin: "host"`). */
const HostEventInput = z.discriminatedUnion(
  'type',
  TASK_EVENTS.map((definition) => EventId.extend(definition.sent.shape)) as unknown as WithEventId<typeof TASK_EVENTS>,
);
export type EventInput = z.infer<typeof EventInput>;
export type EventInputIn = z.input<typeof EventInput>;

/** Why an event was refused before anything was written. */
export interface Refusal {
  code: HostErrorCode;
  detail: string;
  /** Field path of the offending input, for `invalid_event`. */
  path?: string;
}

/**
 * Parses what a caller sent and applies the allow-list: `invalid_event` (with the first issue's
 * field path) for malformed input, `not_allowed` for a Host-only type sent from outside.
 */
export function parseEventInput(raw: unknown, origin: EventOrigin): { input: EventInput } | { refusal: Refusal } {
  const unknownType = origin === 'external' ? unknownTypeRefusal(raw) : undefined;
  if (unknownType) return { refusal: unknownType };
  const parsed = (origin === 'external' ? EventInput : HostEventInput).safeParse(raw);
  if (!parsed.success) {
    const { code, path, message } = zodIssue('invalid_event', parsed.error);
    return { refusal: { code, detail: message, path } };
  }
  const input = parsed.data;
  if (origin === 'external' && !EXTERNAL_EVENT_TYPES.includes(input.type)) {
    return {
      refusal: {
        code: 'not_allowed',
        detail: `${input.type} is established by the Host only; it cannot be sent from outside`,
      },
    };
  }
  return { input };
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(TASK_EVENTS.map((definition) => definition.type));

/**
 * An outsider's event whose `type` is no event at all: named with the nearest type a caller may
 * send, and the list of those alone (not the Host's own types, which would only be `not_allowed`).
 */
function unknownTypeRefusal(raw: unknown): Refusal | undefined {
  if (typeof raw !== 'object' || raw === null || !('type' in raw)) return undefined;
  const type = raw.type;
  if (typeof type === 'string' && KNOWN_TYPES.has(type)) return undefined;
  const near = typeof type === 'string' ? nearestKey(type, EXTERNAL_EVENT_TYPES) : undefined;
  return {
    code: 'invalid_event',
    path: 'type',
    detail:
      `unknown event type ${JSON.stringify(type)}${near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`}; ` +
      `a caller may send ${EXTERNAL_EVENT_TYPES.join(', ')}`,
  };
}

/** What an idempotency key stands for: the caller's event as parsed, without the key itself. */
export function fingerprint(input: EventInput): string {
  const { eventId: _eventId, ...rest } = input;
  return digestOf(rest);
}
