import { z } from 'zod';
import { HarnessRunReceipt } from '../drivers/receipt.js';
import { Digest, TaskId } from '../store/index.js';
import { TaskSpec } from './task-spec.js';

/**
 * The immutable objects the Host keeps, one zod schema per kind. The store validates a body
 * against its kind when it is written and again whenever it is read.
 */

export const AssignmentObject = z.object({
  taskId: TaskId,
  attempt: z.number().int().positive(),
  generation: z.number().int().positive(),
  harness: z.string().min(1),
  purpose: z.string().min(1),
  /** The spec's stage this Assignment runs (absent in Assignments written before stages). */
  stage: z.string().min(1).optional(),
  instructions: z.string().default(''),
});

/** A compiled Context: what the provider is given, each source with identity, trust and reason. */
export const ContextObject = z.object({
  taskId: TaskId,
  generation: z.number().int().positive(),
  sources: z.array(
    z.object({
      id: z.string().min(1),
      digest: Digest,
      trust: z.enum(['host', 'evidence', 'workspace', 'provider']),
      reason: z.string().min(1),
    }),
  ),
  prompt: z.string(),
});

export const ProposalObject = z.object({
  taskId: TaskId,
  generation: z.number().int().positive(),
  evidence: z.record(z.string(), Digest),
  summary: z.string().default(''),
  proposer: z.string().default('external'),
});

/** An Artifact the Host validated and retains as evidence. `digest` names the blob with its bytes. */
export const EvidenceObject = z.object({
  taskId: TaskId,
  generation: z.number().int().positive(),
  name: z.string().min(1),
  schema: z.string().min(1),
  digest: Digest,
  bytes: z.number().int().nonnegative(),
});

export const VerificationObject = z.object({
  taskId: TaskId,
  generation: z.number().int().positive(),
  jobId: z.string(),
  exitCode: z.number().int().nullable(),
  passed: z.boolean(),
  sourceDigest: Digest,
  frozenTestDigests: z.record(z.string(), Digest),
  frozenTestsIntact: z.boolean(),
});

export const OutcomeObject = z.object({
  taskId: TaskId,
  attempt: z.number().int().positive(),
  generation: z.number().int().positive(),
  evidence: z.record(z.string(), Digest),
  sourceDigest: Digest,
  verification: Digest,
  /** The spec's `result` artifact: parsed JSON, text, or null for a file (its digest is in `evidence`). */
  result: z.unknown(),
  /** Which artifact `result` was read from. */
  resultArtifact: z.string().optional(),
});

export const OBJECT_KINDS = {
  'task-spec': TaskSpec,
  assignment: AssignmentObject,
  context: ContextObject,
  proposal: ProposalObject,
  evidence: EvidenceObject,
  receipt: HarnessRunReceipt,
  verification: VerificationObject,
  outcome: OutcomeObject,
} as const;
