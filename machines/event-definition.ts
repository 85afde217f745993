import { z } from 'zod';
import { Envelope, type ClaimKind, type RefKind } from './event-fields.js';

/**
 * How one Task event type is defined (task-events.ts): its fields and the rules beside them, from
 * which its schema, what callers send, its refs and its identity claims are derived.
 */

export type Fields = Record<string, z.ZodType>;

/** Fields that can name stored objects: a digest, a nullable or optional one, a list of them, or a name → digest map. */
type DigestField<F extends Fields> = {
  [K in keyof F]: Exclude<z.output<F[K]>, undefined> extends string | null | string[] | Record<string, string>
    ? K
    : never;
}[keyof F];

/** Per-event rules: what, beside its fields, the kernel needs to know of an event type. */
interface Rules<F extends Fields, W extends keyof F, S extends Fields, E extends boolean> {
  /** Scripts, the CLI and services may send it; otherwise it is a fact only the Host establishes. */
  external: E;
  /** Fields that name stored objects or blobs (each must exist before the event is written), with their kind. */
  refs?: { readonly [K in DigestField<F>]?: RefKind };
  /** Fields whose value the event claims as an identity for its Task alone (no other Task may claim it). */
  claims?: { readonly [K in keyof F]?: ClaimKind };
  /** Digests of the objects the kernel writes for the event; callers do not send them. */
  writes?: readonly W[];
  /**
   * What a caller sends beyond or instead of the event's fields: fields the kernel fills when
   * absent, and fields the kernel keeps only in the object it writes.
   */
  sent?: S;
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
  return {
    type,
    schema: z.object({ type: z.literal(type), ...Envelope.shape, ...fields }),
    sent: z.object({ type: z.literal(type), ...without(fields, rules.writes ?? []) }).extend(rules.sent ?? ({} as S)),
    external: rules.external,
    refs: (rules.refs ?? {}) as Readonly<Record<string, RefKind>>,
    claims: (rules.claims ?? {}) as Readonly<Record<string, ClaimKind>>,
  } as const;
}
