import { z } from 'zod';
import { Digest } from '../store/records.js';

/**
 * Events as callers send them to a Task (library `send`, CLI `send`, the control API, scripts).
 * The kernel adds what only it may know: the revision, the origin, and digests of the objects
 * it writes (assignment, proposal). Host-only types are accepted here so that the allow-list,
 * not a parse error, answers an outsider who sends them (`not_allowed`).
 */
const base = { eventId: z.string().min(1).max(200).optional() };
const generation = z.number().int().positive();
const evidenceMap = z.record(z.string().min(1), Digest);

export const EventInput = z.discriminatedUnion('type', [
  z.object({
    ...base,
    type: z.literal('task.created'),
    taskId: z.string().min(1),
    attempt: z.number().int().positive(),
    specDigest: Digest,
    requiredArtifacts: z.array(z.string().min(1)),
  }),
  z.object({
    ...base,
    type: z.literal('assignment.commit'),
    harness: z.string().min(1).max(200),
    purpose: z.string().min(1).max(200),
    instructions: z.string().max(100_000).default(''),
    /** Optional fence: the generation the caller expects to create (current + 1). */
    generation: generation.optional(),
  }),
  z.object({
    ...base,
    type: z.literal('completion.propose'),
    generation,
    contextDigest: Digest.optional(),
    evidence: evidenceMap.default({}),
    summary: z.string().max(100_000).default(''),
    proposer: z.string().max(200).default('external'),
  }),
  z.object({ ...base, type: z.literal('task.cancel'), reason: z.string().min(1).max(2_000) }),
  z.object({ ...base, type: z.literal('context.compile'), generation, contextDigest: Digest }),
  z.object({ ...base, type: z.literal('dispatch.intend'), generation, clientRequestId: z.string().min(1) }),
  z.object({ ...base, type: z.literal('dispatch.ack'), clientRequestId: z.string().min(1), jobId: z.string().min(1) }),
  z.object({ ...base, type: z.literal('dispatch.lost'), clientRequestId: z.string().min(1) }),
  z.object({
    ...base,
    type: z.literal('dispatch.reconcile'),
    clientRequestId: z.string().min(1),
    jobIds: z.array(z.string().min(1)),
  }),
  z.object({
    ...base,
    type: z.literal('run.observe'),
    generation,
    clientRequestId: z.string().min(1),
    contextDigest: Digest,
    receiptDigest: Digest,
    jobStatus: z.string().min(1),
    evidence: evidenceMap.default({}),
    /** Required artifacts this run wrote that were not retained, name → why (schema, refusal, late edit). */
    refused: z.record(z.string().min(1).max(1_000), z.string().max(2_000)).optional(),
    /** Host-computed digest of the workspace source (artifacts excluded) when the run ended. */
    sourceDigest: Digest.optional(),
  }),
  z.object({ ...base, type: z.literal('evaluation.settle'), generation }),
  z.object({
    ...base,
    type: z.literal('verification.record'),
    generation,
    passed: z.boolean(),
    verificationDigest: Digest,
    sourceDigest: Digest,
    outcomeDigest: Digest.nullable().default(null),
  }),
]);
export type EventInput = z.infer<typeof EventInput>;
export type EventInputIn = z.input<typeof EventInput>;
