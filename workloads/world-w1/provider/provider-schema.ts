import { z } from 'zod';

// Every shape that crosses the provider's boundaries (HTTP bodies, headers and answers, the URL
// line, a row of its records file) is one zod schema here, shared by the server and its clients.

const Name = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:/-]+$/, 'letters, digits and . _ : / - only');
const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'sha256:<64 hex digits>');

/** The three operations, each shaped like a real provider API (docs/world-w1.md). */
export const Operation = z.enum(['orders', 'transfers', 'messages']);
export type Operation = z.infer<typeof Operation>;

/**
 * The body of every operation. `reference` is the caller's name for the effect it means (an
 * order number): the records count performs per reference, whatever keys or ids were sent.
 */
export const OperationBody = z.strictObject({ reference: Name, target: Name, data: z.json().optional() });
export type OperationBody = z.infer<typeof OperationBody>;

/** The request headers the operations read (Node lower-cases header names). */
export const OperationHeaders = z.object({
  'input-digest': Digest,
  'idempotency-key': Name.optional(),
  'if-match': z.string().min(1).max(200).optional(),
});

/** `PUT /v1/targets/:name`. */
export const TargetBody = z.strictObject({ content: z.json() });
export const TargetHeaders = z.object({ 'if-match': z.string().min(1).max(200).optional() });

/** A target as the provider answers it; `version` is also the `ETag` header. */
export const Target = z.strictObject({ name: z.string(), version: z.string(), content: z.json() });
export type Target = z.infer<typeof Target>;

export const PathName = z.object({ name: Name });
export const PathKey = z.object({ key: Name });
export const PathId = z.object({ id: Name });

/**
 * What an operation answers, and what a lookup returns: the provider's receipt. `inputDigest` is
 * the `Input-Digest` the caller sent, stored with the record, so a reconciler can tell a receipt
 * of its own intent from another request that reused the key.
 */
export const Receipt = z.strictObject({
  id: z.string(),
  object: z.enum(['order', 'transfer', 'message']),
  status: z.enum(['pending', 'succeeded']),
  reference: z.string(),
  target: z.string(),
  targetVersion: z.string(),
  inputDigest: Digest,
  createdAt: z.iso.datetime(),
});
export type Receipt = z.infer<typeof Receipt>;

/** The fault switches one operation can hit; `times` answers hit it, then it switches itself off. */
const Switch = z.strictObject({
  operations: z.array(Operation).min(1).default(['orders', 'transfers', 'messages']),
  times: z.number().int().positive().optional(),
});

/**
 * `POST /_faults`: every field optional; a field given replaces that switch, `null` switches it
 * off. `drop`: commit, then destroy the socket without an answer. `delay`: commit, then hold the
 * answer `ms` (or until `POST /_faults/release`). `identity`: answer under the fingerprint of this
 * key instead of the server's own. `advanceClockMs`: move the provider's clock forward (lookup
 * windows and settling read it). `moveTarget`: change that target's content now (its ETag moves).
 */
export const FaultRequest = z.strictObject({
  drop: Switch.nullable().optional(),
  // A timer holds at most 2^31 - 1 ms; a longer one would fire at once.
  delay: Switch.extend({ ms: z.number().int().positive().max(2_147_483_647) })
    .nullable()
    .optional(),
  identity: z.string().min(1).max(200).nullable().optional(),
  advanceClockMs: z.number().int().nonnegative().optional(),
  moveTarget: Name.optional(),
});
export type FaultRequest = z.infer<typeof FaultRequest>;

const SwitchState = z.strictObject({
  operations: z.array(Operation),
  remaining: z.number().int().positive().nullable(),
});

/** The switches as they stand (`remaining: null`: until switched off); `now` is the provider's clock. */
export const FaultState = z.strictObject({
  drop: SwitchState.nullable(),
  delay: SwitchState.extend({ ms: z.number().int().positive() }).nullable(),
  identity: z.string(),
  identityChanged: z.boolean(),
  now: z.iso.datetime(),
  held: z.number().int().nonnegative(),
});
export type FaultState = z.infer<typeof FaultState>;

/** One operation's declared capabilities (`GET /.well-known/provider`). */
export const Capabilities = z.strictObject({
  idempotency: z.enum(['key', 'provider-id', 'none']),
  lookup: z.boolean(),
  lookupWindowMs: z.number().int().positive().nullable(),
});
export type Capabilities = z.infer<typeof Capabilities>;

export const Discovery = z.strictObject({
  identity: z.string(),
  capabilities: z.strictObject({ orders: Capabilities, transfers: Capabilities, messages: Capabilities }),
});
export type Discovery = z.infer<typeof Discovery>;

/** One perform as the records file holds it: the ground truth the counts are read from. */
export const ProviderRecord = z.strictObject({
  seq: z.number().int().positive(),
  id: z.string(),
  operation: Operation,
  reference: z.string(),
  idempotencyKey: z.string().nullable(),
  target: z.string(),
  targetVersion: z.string(),
  inputDigest: Digest,
  bodyDigest: Digest,
  performedAt: z.iso.datetime(),
});
export type ProviderRecord = z.infer<typeof ProviderRecord>;

/** `GET /_records`. */
export const RecordsAnswer = z.strictObject({ records: z.array(ProviderRecord) });

/** A row of `performs` as better-sqlite3 returns it. */
export const PerformRow = z
  .strictObject({
    seq: z.number().int(),
    id: z.string(),
    operation: z.string(),
    reference: z.string(),
    idempotency_key: z.string().nullable(),
    target: z.string(),
    target_version: z.string(),
    input_digest: z.string(),
    body_digest: z.string(),
    performed_at: z.number().int(),
  })
  .transform((row) => ({
    seq: row.seq,
    id: row.id,
    operation: row.operation,
    reference: row.reference,
    idempotencyKey: row.idempotency_key,
    target: row.target,
    targetVersion: row.target_version,
    inputDigest: row.input_digest,
    bodyDigest: row.body_digest,
    performedAt: new Date(row.performed_at).toISOString(),
  }))
  .pipe(ProviderRecord);

/** Every refusal the server answers (4xx, 5xx). */
export const ErrorAnswer = z.strictObject({ code: z.string(), path: z.string(), message: z.string() });

/** The one line the server prints on stdout once it listens. */
export const UrlLine = z.strictObject({ url: z.url(), identity: z.string() });
export type UrlLine = z.infer<typeof UrlLine>;
