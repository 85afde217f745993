import { z } from 'zod';
import { Envelope, type ClaimKind, type RefKind } from './event-fields.js';

/**
 * How one Task event type is defined (task-events.ts): its fields and the rules beside them, from
 * which its schema, what callers send, its refs, its identity claims and how the kernel admits it
 * are derived. The kernel interprets the rules; it keeps no list of event types of its own.
 */

export type Fields = Record<string, z.ZodType>;

/**
 * What the kernel establishes about a sent event before the statechart takes it, written into the
 * event so guards read only event data and a replay decides as the first admission did. The
 * catalog names which facts an event needs; how each is gathered (the store, the spec, the world,
 * the clock) is the kernel's (kernel/admission-facts.ts).
 */
export const ADMISSION_FACTS = {
  /** `generation`: the caller's fence, or the current generation + 1; another is refused `generation_mismatch`. */
  'next-generation': ['generation'],
  /** `stage`, `purpose`: the spec's stage the Assignment runs; none is refused `stage_unknown`. */
  stage: ['stage', 'purpose'],
  /** `harnesses`: the Host's harnesses, when it knows them and the Assignment names none of them. */
  harnesses: ['harnesses'],
  /** `goalRevision`: the caller's fence, or the current revision + 1; another is refused `goal_revision_mismatch`. */
  'next-goal-revision': ['goalRevision'],
  /** `contextDigest`: the current Context when the caller names none (`none` before the first). */
  'named-context': ['contextDigest'],
  /** `stale`: what moved in the read set of the Context the event names, when it is the current one. */
  'read-set': ['stale'],
  /** Whether the named Context is this Task's, its generation, the chosen candidate's authority and action, and what moved. */
  decision: ['generation', 'known', 'authority', 'action', 'ask', 'stale'],
  /** The Host's clock, whether the named request takes the answer, what moved and what revoked it. */
  answer: ['now', 'allowed', 'stale', 'revokedBy'],
} as const satisfies Record<string, readonly string[]>;
export type AdmissionFact = keyof typeof ADMISSION_FACTS;

/** Fields that can name stored objects: a digest, a nullable or optional one, a list of them, or a name → digest map. */
type DigestField<F extends Fields> = {
  [K in keyof F]: Exclude<z.output<F[K]>, undefined> extends string | null | string[] | Record<string, string>
    ? K
    : never;
}[keyof F];

/** What the kernel holds when it writes an event's object: what was sent, with the facts it found. */
export type Admitted<F extends Fields, W extends keyof F, S extends Fields> = z.output<
  z.ZodObject<z.util.Extend<Omit<F, W>, S>>
> &
  Partial<z.output<z.ZodObject<F>>>;

/** The Task an object is written for. */
export interface ObjectOwner {
  taskId: string;
  attempt: number;
}

/** How the kernel admits an event sent to it: the facts it establishes first, then the object it writes. */
interface Admission<F extends Fields, W extends keyof F, S extends Fields> {
  /** Gathered in this order; the first refusal ends the admission (nothing written). */
  facts?: readonly AdmissionFact[];
  /**
   * The object the kernel writes with the event, in the same commit: its digest goes into `field`
   * (one of `refs`, whose kind is the object's), its body is built from what was sent and the facts.
   */
  object?: { field: W & DigestField<F>; body: (event: Admitted<F, W, S>, owner: ObjectOwner) => object };
}

/** Per-event rules: what, beside its fields, the kernel needs to know of an event type. */
interface Rules<F extends Fields, W extends keyof F, S extends Fields, E extends boolean> {
  /** Scripts, the CLI and services may send it; otherwise it is a fact only the Host establishes. */
  external: E;
  /** Fields that name stored objects or blobs (each must exist before the event is written), with their kind. */
  refs?: { readonly [K in DigestField<F>]?: RefKind };
  /** Fields whose value the event claims as an identity for its Task alone (no other Task may claim it). */
  claims?: { readonly [K in keyof F]?: ClaimKind };
  /** Fields the kernel fills (an object's digest, the facts it establishes); callers do not send them. */
  writes?: readonly W[];
  /**
   * What a caller sends beyond or instead of the event's fields: fields the kernel fills when
   * absent, and fields the kernel keeps only in the object it writes.
   */
  sent?: S;
  /** How the kernel admits it (nothing beyond the envelope when absent). */
  admission?: Admission<F, W, S>;
}

/** An event's admission as the kernel interprets it. */
export interface EventAdmission {
  readonly facts: readonly AdmissionFact[];
  readonly object?: {
    readonly kind: RefKind;
    readonly field: string;
    // A method, so each definition's own (narrower) parameter type is accepted here.
    body(event: Record<string, unknown>, owner: ObjectOwner): object;
  };
}

/** One Task event type's definition, as the derivations below see it. */
export interface TaskEventDefinition {
  readonly type: string;
  /** The statechart's event: type, envelope, fields. */
  readonly schema: z.ZodObject;
  /** What callers send: the event without its envelope and kernel-written digests, with `rules.sent`. */
  readonly sent: z.ZodObject;
  readonly external: boolean;
  readonly refs: Readonly<Record<string, RefKind>>;
  readonly claims: Readonly<Record<string, ClaimKind>>;
  readonly admission: EventAdmission;
}

/** `fields` without the `drop` ones. */
function without<F extends Fields, W extends keyof F>(fields: F, drop: readonly W[]): Omit<F, W> {
  const kept: Fields = { ...fields };
  for (const field of drop) delete kept[field as string];
  return kept as Omit<F, W>;
}

export function taskEvent<
  const T extends string,
  F extends Fields,
  const W extends keyof F & string = never,
  S extends Fields = {},
  const E extends boolean = boolean,
>(type: T, fields: F, rules: Rules<F, W, S, E>) {
  const refs = (rules.refs ?? {}) as Readonly<Record<string, RefKind>>;
  const object = rules.admission?.object;
  const kind = object && refs[object.field];
  if (object && kind === undefined) throw new Error(`${type}: the object's field ${object.field} is none of its refs`);
  const admission: EventAdmission = {
    facts: rules.admission?.facts ?? [],
    ...(object && kind
      ? { object: { kind, field: object.field, body: object.body as NonNullable<EventAdmission['object']>['body'] } }
      : {}),
  };
  return {
    type,
    schema: z.object({ type: z.literal(type), ...Envelope.shape, ...fields }),
    sent: z.object({ type: z.literal(type), ...without(fields, rules.writes ?? []) }).extend(rules.sent ?? ({} as S)),
    external: rules.external,
    refs,
    claims: (rules.claims ?? {}) as Readonly<Record<string, ClaimKind>>,
    admission,
  } as const;
}
