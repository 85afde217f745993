import { z } from 'zod';
import { HarnessRunReceipt } from '../drivers/receipt.js';
import { Digest, TaskId } from '../store/index.js';

/**
 * The immutable objects the Host keeps, one zod schema per kind. The store validates a body
 * against its kind when it is written and again whenever it is read.
 */

export const RequiredArtifact = z.object({
  /** Workspace-relative file name, e.g. `diagnosis.json`. */
  name: z
    .string()
    .min(1)
    .max(200)
    .refine((n) => !n.split('/').includes('..') && !n.startsWith('/'), 'must stay inside the workspace'),
  /** Name of the zod schema the Host validates the artifact with (see objects/artifact-schemas.ts). */
  schema: z.string().min(1),
});

export const TaskSpec = z.object({
  taskId: TaskId.optional(),
  title: z.string().min(1).max(500),
  goal: z.string().min(1).max(20_000),
  requiredArtifacts: z.array(RequiredArtifact).min(1),
  acceptance: z
    .object({
      command: z.string().min(1),
      args: z.array(z.string()).default([]),
      /** Workspace-relative paths of the frozen acceptance tests; their digests must not change. */
      frozenTests: z.array(z.string().min(1)).default([]),
      timeoutMs: z.number().int().positive().default(120_000),
      /** sha256 of each frozen test as seeded; computed by the Host from `workspaceSeed` when absent. */
      frozenTestDigests: z.record(z.string(), Digest).optional(),
    })
    .optional(),
  /** Directory copied into each Task Attempt's workspace (the repository to repair). */
  workspaceSeed: z.string().min(1).optional(),
  labels: z.record(z.string(), z.string()).default({}),
});
export type TaskSpec = z.infer<typeof TaskSpec>;
export type TaskSpecInput = z.input<typeof TaskSpec>;

export const AssignmentObject = z.object({
  taskId: TaskId,
  attempt: z.number().int().positive(),
  generation: z.number().int().positive(),
  harness: z.string().min(1),
  purpose: z.string().min(1),
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
  result: z.unknown(),
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
