import { z } from 'zod';

/**
 * The field schemas Task events are built from (task-events.ts): the envelope, digests and ids,
 * what moved under a Context, what revoked a request, and refusals stored as data.
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
export const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected sha256:<64 hex>');
export const Generation = z.number().int().positive();
export const Id = z.string().min(1);
export const Label = z.string().min(1).max(200);
/** Artifacts by name → digest of their bytes. */
export const EvidenceMap = z.record(z.string().min(1), Digest);

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
export const Stale = z.array(StaleSource).optional();

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
  'artifact_hardlink',
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
