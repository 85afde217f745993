import { z } from 'zod';

/**
 * The Task statechart's events, each defined once, here: its zod schema is the event's type, and
 * the rules beside it say who may send it, which of its fields name stored objects, which
 * identities it claims, and what the kernel adds to what a caller sends. Everything else (the
 * event union, the type lists, the allow-list, the refs, what callers send) is derived below.
 *
 * Every event carries the stream `revision` it will occupy once appended and its `origin`:
 * `host` for facts the Host establishes, `external` for events from scripts, the CLI or a service.
 *
 * The kernel parses what callers send (each event's `sent` form, actors/event-input.ts) before
 * an event reaches the machine. Stored events are verified by recovery and replayed without
 * parsing: nothing here runs per replayed event but the constant tables.
 */

export const EventOrigin = z.enum(['host', 'external']);
export type EventOrigin = z.infer<typeof EventOrigin>;

/** What the kernel adds to every event: the revision it will occupy once appended, and its origin. */
export const Envelope = z.object({ revision: z.number().int().positive(), origin: EventOrigin });
export type Envelope = z.infer<typeof Envelope>;

/** What an event's ref names: one of the Host's object kinds (objects/object-kinds.ts), or a blob (artifact bytes). */
export type RefKind =
  | 'task-spec'
  | 'assignment'
  | 'context'
  | 'prompt'
  | 'goal'
  | 'decision'
  | 'effect-intent'
  | 'effect-receipt'
  | 'decision-request'
  | 'receipt'
  | 'proposal'
  | 'verification'
  | 'outcome'
  | 'blob';

/** Identity index kinds an event's field may claim for its Task alone (the store's `IndexKind`). */
export type ClaimKind = 'request';

/** The store's object name, `sha256:<64 hex>` (store/records.ts `Digest`; machines/ imports no other folder). */
const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected sha256:<64 hex>');
const Generation = z.number().int().positive();
const Id = z.string().min(1);
const Label = z.string().min(1).max(200);
/** Artifacts by name → digest of their bytes. */
const EvidenceMap = z.record(z.string().min(1), Digest);

/**
 * What the kernel found moved when it re-validated the read set of the Context an event was made
 * against: each trusted source (or a source depending on one that moved), bound and current
 * (`sha256:…`, or `revision N` for the Goal; current null: gone). Recorded in the event, so replay
 * decides as the first admission did without reading the world again. Callers never send it.
 */
export const StaleSource = z.object({
  sourceId: Id,
  bound: z.string().min(1),
  current: z.string().min(1).nullable(),
  /** The moved source this one depends on, when it did not move itself. */
  via: Id.optional(),
});
export type StaleSource = z.infer<typeof StaleSource>;
const Stale = z.array(StaleSource).optional();

/**
 * What revoked a DecisionRequest, as the kernel found it in the Task's journal when a later answer
 * came: the admitted event and its revision (an Assignment's generation, a `request.revoke`'s
 * reason, a stale answer's moved sources).
 */
export const RevokedBy = z.object({
  event: z.enum(['assignment.commit', 'request.revoke', 'request.answer']),
  revision: z.number().int().positive(),
  generation: z.number().int().optional(),
  reason: z.string().max(2_000).optional(),
  stale: z.array(StaleSource).optional(),
});
export type RevokedBy = z.infer<typeof RevokedBy>;

/**
 * Codes of a required artifact a run wrote that the Host did not retain (docs/errors.md): its
 * contract failed or names nothing registered, its bytes changed after the run ended, or the
 * workspace read refused it (the confinement's codes, as the receipt's `artifactRefusals` names them).
 */
export const ARTIFACT_REFUSAL_CODES = [
  'artifact_invalid',
  'contract_unknown',
  'artifact_changed',
  'artifact_missing',
  'artifact_too_large',
  'artifact_unreadable',
  'path_escape',
  'symlink_escape',
  'not_a_file',
] as const;
export const ArtifactRefusalCode = z.enum(ARTIFACT_REFUSAL_CODES);
export type ArtifactRefusalCode = z.infer<typeof ArtifactRefusalCode>;

/** Why an artifact was not retained: a code of the table, and the detail for the reader. */
export const ArtifactRefusal = z.object({ code: ArtifactRefusalCode, detail: z.string().max(2_000) });
export type ArtifactRefusal = z.infer<typeof ArtifactRefusal>;

/**
 * The code of a refusal stored as prose (machine version 4 and before). Those strings were built
 * in three forms only, each naming its code: `invalid <contract>: …` (artifact_invalid),
 * `<code> <contract>: …` / `<code>: …` (contract_unknown, the confinement's codes), and
 * `changed after the run ended` (artifact_changed). A string in none of them (not written by a
 * Host) keeps `artifact_invalid`: it was refused as evidence, which is what that code says.
 */
export function legacyRefusalCode(text: string): ArtifactRefusalCode {
  if (text.startsWith('invalid ')) return 'artifact_invalid';
  if (text === 'changed after the run ended') return 'artifact_changed';
  const named = /^([a-z_]+)[: ]/.exec(text)?.[1];
  const known = ArtifactRefusalCode.safeParse(named);
  return known.success ? known.data : 'artifact_invalid';
}

/** A stored refusal: `{code, detail}`, or the prose of an older journal read as one (the prose kept as its detail). */
export const StoredArtifactRefusal = z.union([
  ArtifactRefusal,
  z
    .string()
    .max(2_000)
    .transform((detail): ArtifactRefusal => ({ code: legacyRefusalCode(detail), detail })),
]);

/**
 * What made an acceptance verification fail, as the Host found it (machine version 5; absent in
 * older journals and on a pass): a frozen test whose digest is not the one the Task pinned
 * (`current` null: absent or unreadable, `code` the read's refusal), the command's exit (null when
 * it did not exit: timeout, stop) with its job state and the last characters of its output, or a
 * source digest that moved while it ran or differs from the Host's own.
 */
export const VerificationCause = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('frozen'),
    path: z.string().min(1).max(1_000),
    bound: Digest,
    current: Digest.nullable(),
    code: z.string().min(1).max(200).optional(),
  }),
  z.object({
    kind: z.literal('command'),
    exitCode: z.number().int().nullable(),
    jobState: z.string().min(1).max(200),
    stdout: z.string().max(2_000),
    stderr: z.string().max(2_000),
  }),
  z.object({
    kind: z.literal('source'),
    before: Digest.nullable(),
    after: Digest.nullable(),
    host: Digest,
  }),
]);
export type VerificationCause = z.infer<typeof VerificationCause>;

type Fields = Record<string, z.ZodType>;

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

function taskEvent<
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

/** Every Task event, in the order of the lifecycle. */
export const TASK_EVENTS = [
  taskEvent(
    'task.created',
    { taskId: Id, attempt: z.number().int().positive(), specDigest: Digest, requiredArtifacts: z.array(Id) },
    { external: false, refs: { specDigest: 'task-spec' } },
  ),
  taskEvent(
    'assignment.commit',
    {
      harness: Label,
      purpose: Label,
      generation: Generation,
      assignmentDigest: Digest,
      /** The spec's stage the Assignment runs (absent in events written before stages). */
      stage: Label.optional(),
      /**
       * Written by a Host that knows its harnesses when `harness` is none of them (the event is
       * retained, refused `harness_unknown`); absent when the harness is known or not checked.
       */
      harnesses: z.array(Label).optional(),
    },
    {
      external: true,
      refs: { assignmentDigest: 'assignment' },
      writes: ['assignmentDigest', 'harnesses'],
      sent: {
        /** The stage's purpose when absent; with a spec that has stages and no `stage`, the stage's name. */
        purpose: Label.optional(),
        /** Optional fence: the generation the caller expects to create (current + 1); the next one when absent. */
        generation: Generation.optional(),
        /** Kept in the Assignment object the kernel writes. */
        instructions: z.string().max(100_000).default(''),
      },
    },
  ),
  taskEvent(
    'context.compile',
    {
      generation: Generation,
      contextDigest: Digest,
      /** The prompt rendered from the Context (absent in events written before read sets). */
      promptDigest: Digest.optional(),
    },
    {
      external: false,
      refs: { contextDigest: 'context', promptDigest: 'prompt' },
    },
  ),
  taskEvent(
    'dispatch.intend',
    { generation: Generation, clientRequestId: Id },
    {
      external: false,
      claims: { clientRequestId: 'request' },
    },
  ),
  taskEvent('dispatch.ack', { clientRequestId: Id, jobId: Id }, { external: false }),
  taskEvent('dispatch.lost', { clientRequestId: Id }, { external: false }),
  taskEvent('dispatch.reconcile', { clientRequestId: Id, jobIds: z.array(Id) }, { external: false }),
  taskEvent(
    'run.observe',
    {
      generation: Generation,
      clientRequestId: Id,
      contextDigest: Digest,
      receiptDigest: Digest,
      jobStatus: Id,
      /** Artifacts of this run that the Host validated, name → digest. */
      evidence: EvidenceMap.default({}),
      /**
       * Required artifacts this run wrote that were not retained, name → `{code, detail}` (recorded,
       * not used by guards); a journal of machine version 4 or before stored the detail alone.
       */
      refused: z.record(z.string().min(1).max(1_000), StoredArtifactRefusal).optional(),
      /** Host-computed digest of the workspace source (artifacts excluded) when the run ended (recorded, not used by guards). */
      sourceDigest: Digest.optional(),
      stale: Stale,
    },
    { external: false, refs: { receiptDigest: 'receipt', evidence: 'blob' }, writes: ['stale'] },
  ),
  taskEvent(
    'completion.propose',
    {
      generation: Generation,
      /** The Context the proposal was made against (`none` before the first). */
      contextDigest: z.string().min(1),
      proposalDigest: Digest,
      /** The evidence the proposal relies on, name → digest; must match what the Host holds. */
      evidence: EvidenceMap.default({}),
      stale: Stale,
    },
    {
      external: true,
      refs: { proposalDigest: 'proposal' },
      writes: ['proposalDigest', 'stale'],
      sent: {
        /** The current Context when absent. */
        contextDigest: Digest.optional(),
        /** Kept in the Proposal object the kernel writes. */
        summary: z.string().max(100_000).default(''),
        proposer: z.string().max(200).default('external'),
      },
    },
  ),
  taskEvent(
    'evaluation.settle',
    {
      generation: Generation,
      /** Artifacts the stage was to write that are not held (recorded, not used by guards). */
      missing: z.array(Id).optional(),
    },
    { external: false },
  ),
  taskEvent(
    'verification.record',
    {
      generation: Generation,
      passed: z.boolean(),
      verificationDigest: Digest,
      sourceDigest: Digest,
      /** Present when `passed`: the TaskOutcome object the Host wrote before this event. */
      outcomeDigest: Digest.nullable().default(null),
      /** When not `passed`, what failed (absent in journals of machine version 4 and before). */
      causes: z.array(VerificationCause).max(1_000).optional(),
      stale: Stale,
    },
    { external: false, refs: { verificationDigest: 'verification', outcomeDigest: 'outcome' }, writes: ['stale'] },
  ),
  taskEvent(
    'decision.submit',
    {
      /** The Context the decision was made against. */
      contextDigest: Digest,
      candidateId: Label,
      decisionDigest: Digest,
      /** The named Context's Assignment generation (0: not a Context of this Task). */
      generation: z.number().int().nonnegative(),
      /** Whether the named Context was compiled for this Task. */
      known: z.boolean(),
      /** The candidate's authority in the named Context; null: not one of its candidates. */
      authority: z.enum(['trusted', 'untrusted']).nullable(),
      /** The candidate's action kind (absent in events written before Effects). */
      action: z.enum(['none', 'command', 'effect', 'reconcile', 'abandon']).nullable().optional(),
      /** An untrusted candidate of a Context whose stage puts it to a person (machine version 6). */
      ask: z.boolean().optional(),
      stale: Stale,
    },
    {
      external: true,
      refs: { decisionDigest: 'decision' },
      writes: ['decisionDigest', 'generation', 'known', 'authority', 'action', 'ask', 'stale'],
      sent: {
        /** Kept in the Decision object the kernel writes. */
        rationale: z.string().max(20_000).default(''),
        decider: z.string().min(1).max(200).default('external'),
      },
    },
  ),
  taskEvent(
    'action.record',
    {
      generation: Generation,
      candidateId: Label,
      /** The Runtime job that ran the action's command (null: the action runs nothing). */
      jobId: Id.nullable(),
      exitCode: z.number().int().nullable(),
      ok: z.boolean(),
    },
    { external: false },
  ),
  taskEvent(
    'effect.intend',
    {
      generation: Generation,
      requestId: Id,
      candidateId: Label,
      intentDigest: Digest,
      /** Who reconciles a lost answer: the Host by lookup, or the next decision. */
      reconcile: z.enum(['host', 'decision']),
    },
    { external: false, refs: { intentDigest: 'effect-intent' }, claims: { requestId: 'request' } },
  ),
  taskEvent(
    'effect.record',
    { requestId: Id, receiptDigest: Digest },
    { external: false, refs: { receiptDigest: 'effect-receipt' } },
  ),
  taskEvent('effect.lost', { requestId: Id, reason: z.string().max(2_000) }, { external: false }),
  taskEvent('effect.fail', { requestId: Id, code: Label, reason: z.string().max(2_000) }, { external: false }),
  taskEvent(
    'effect.reconcile',
    {
      requestId: Id,
      /** The receipts `lookup` found under the request id (recorded as objects), none, one or more. */
      receiptDigests: z.array(Digest),
    },
    { external: false, refs: { receiptDigests: 'effect-receipt' } },
  ),
  taskEvent(
    'request.open',
    {
      requestId: Id,
      requestDigest: Digest,
      generation: z.number().int().nonnegative(),
      about: z.enum(['effect', 'permission', 'operator', 'authority']),
      contextDigest: Digest.nullable(),
      /** Epoch milliseconds after which an answer is expired; null: no deadline. */
      expiresAt: z.number().int().nonnegative().nullable(),
    },
    { external: false, refs: { requestDigest: 'decision-request' } },
  ),
  taskEvent(
    'request.answer',
    {
      requestId: Id,
      answer: Label,
      answeredBy: Label,
      note: z.string().max(2_000),
      /** The Host's clock (epoch ms) when the kernel admitted the answer: expiry is decided on it. */
      now: z.number().int().nonnegative(),
      /** Whether the answer is one the request allows. */
      allowed: z.boolean(),
      stale: Stale,
      /** What had revoked the request, when it was revoked (absent in journals older than it). */
      revokedBy: RevokedBy.optional(),
    },
    {
      external: true,
      writes: ['now', 'allowed', 'stale', 'revokedBy'],
      sent: {
        answeredBy: Label.default('external'),
        note: z.string().max(2_000).default(''),
      },
    },
  ),
  taskEvent('request.expire', { requestId: Id, now: z.number().int().nonnegative() }, { external: false }),
  taskEvent('request.revoke', { requestId: Id, reason: z.string().min(1).max(2_000) }, { external: false }),
  taskEvent(
    'goal.revise',
    { goalRevision: z.number().int().min(2), goalDigest: Digest },
    {
      external: true,
      refs: { goalDigest: 'goal' },
      writes: ['goalDigest'],
      sent: {
        /** Kept in the Goal object the kernel writes. */
        goal: z.string().min(1).max(20_000),
        reason: z.string().max(2_000).default(''),
        /** Optional fence: the revision the caller expects to create (current + 1); the next one when absent. */
        goalRevision: z.number().int().min(2).optional(),
      },
    },
  ),
  taskEvent('task.cancel', { reason: z.string().min(1).max(2_000) }, { external: true }),
] as const satisfies readonly TaskEventDefinition[];

/** Each element's `K` member, as a tuple (a mapped type keeps a tuple only over a type parameter). */
type Each<D extends readonly unknown[], K extends PropertyKey> = {
  -readonly [I in keyof D]: D[I] extends { readonly [P in K]: infer V } ? V : never;
};

/** The `key` member of each definition, keeping the tuple's element types (which `Array.map` loses). */
function eachEvent<const K extends keyof TaskEventDefinition>(key: K) {
  return TASK_EVENTS.map((definition) => definition[key]) as unknown as Each<typeof TASK_EVENTS, K>;
}

/** A Task event as the statechart takes it (and the journal stores it: `type`, `origin`, revision, `data`). */
export const TaskEvent = z.discriminatedUnion('type', eachEvent('schema'));
export type TaskEvent = z.output<typeof TaskEvent>;
export type TaskEventType = TaskEvent['type'];

/** Every event type, in the order of the lifecycle. */
export const TASK_EVENT_TYPES: readonly TaskEventType[] = TASK_EVENTS.map((definition) => definition.type);

/** Event types that scripts, the CLI and services may send. Everything else is a Host-only fact. */
export const EXTERNAL_EVENT_TYPES: readonly TaskEventType[] = TASK_EVENTS.filter((d) => d.external).map((d) => d.type);

/** The types in `EXTERNAL_EVENT_TYPES`, as a union (each definition's `external` is a literal). */
export type ExternalEventType = Extract<(typeof TASK_EVENTS)[number], { readonly external: true }>['type'];

/** Per event type, the fields naming stored objects or blobs (in its rules' order), with their kind. */
export const TASK_EVENT_REFS = Object.fromEntries(
  TASK_EVENTS.map((d) => [d.type, Object.entries(d.refs).map(([field, kind]) => ({ field, kind }))]),
) as unknown as { readonly [T in TaskEventType]: ReadonlyArray<{ field: string; kind: RefKind }> };

/** Per event type, the fields whose value the event claims as an identity for its Task alone. */
export const TASK_EVENT_CLAIMS = Object.fromEntries(
  TASK_EVENTS.map((d) => [d.type, Object.entries(d.claims).map(([field, kind]) => ({ field, kind }))]),
) as unknown as { readonly [T in TaskEventType]: ReadonlyArray<{ field: string; kind: ClaimKind }> };

function valueOf(event: TaskEvent, field: string): unknown {
  return (event as Record<string, unknown>)[field];
}

/**
 * Object and blob digests the event references (each must exist before it is written), in the
 * order its rules list the fields: a digest field's value, a list's or a name → digest map's
 * values; a null digest names nothing.
 */
export function refsOf(event: TaskEvent): string[] {
  const refs: string[] = [];
  for (const { field } of TASK_EVENT_REFS[event.type]) {
    const value = valueOf(event, field);
    if (typeof value === 'string') refs.push(value);
    else if (value !== null && typeof value === 'object') refs.push(...Object.values(value as Record<string, string>));
  }
  return refs;
}

/** Identities the event claims for its Task alone (its store index claims). */
export function claimsOf(event: TaskEvent): Array<{ kind: ClaimKind; key: string }> {
  return TASK_EVENT_CLAIMS[event.type].map(({ field, kind }) => ({ kind, key: String(valueOf(event, field)) }));
}
