import { z } from 'zod';
import { HarnessRunReceipt } from '../drivers/receipt.js';
import { Digest, TaskId } from '../store/index.js';
import { CandidateAction, TaskSpec } from './task-spec.js';

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

export const Trust = z.enum(['trusted', 'untrusted']);
export type Trust = z.infer<typeof Trust>;

/**
 * One entry of a Context's read set: what was read (identity and revision or digest), how far it
 * may be believed (trust: authority or data; claim: `asserted` by an authority, `verified` by the
 * Host itself, `unverified` otherwise), why it was selected, and what it is only valid with.
 */
export const ReadSetItem = z.object({
  sourceId: z.string().min(1),
  /** The Goal's revision (the Goal item only). */
  revision: z.number().int().positive().optional(),
  digest: Digest,
  trust: Trust,
  claim: z.enum(['asserted', 'unverified', 'verified']),
  selectedBy: z.string().min(1),
  dependsOn: z.array(z.string().min(1)),
  /** Where admission re-reads a spec source. */
  location: z.object({ in: z.enum(['workspace', 'world']), path: z.string().min(1) }).optional(),
  /**
   * An observation of an `effect` candidate's endpoint or target (its adapter's `observe`): what
   * was asked, which aspect, and the value the provider gave (capabilities as JSON; null: the
   * target does not exist). Re-read when a decision for that candidate is admitted and before
   * the Effect is performed.
   */
  observed: z
    .object({
      candidateId: z.string().min(1),
      adapter: z.string().min(1),
      operation: z.string().min(1),
      target: z.string().min(1),
      aspect: z.enum(['endpoint', 'target', 'capabilities']),
      value: z.string().nullable(),
    })
    .optional(),
});
export type ReadSetItem = z.infer<typeof ReadSetItem>;

/** A candidate as compiled into a Context: its action and the trust of each source that supports it. */
export const CompiledCandidate = z.object({
  id: z.string().min(1),
  summary: z.string(),
  action: CandidateAction,
  supportedBy: z.array(z.object({ sourceId: z.string().min(1), trust: Trust })),
  authority: Trust,
});
export type CompiledCandidate = z.infer<typeof CompiledCandidate>;

/**
 * A compiled Context: the read set a provider's work is bound to (and candidates, for a decision
 * stage). Its digest is what results, proposals and decisions name; admission re-validates it.
 */
export const ReadSetContext = z.object({
  taskId: TaskId,
  generation: z.number().int().positive(),
  stage: z.string().min(1),
  goal: z.object({ revision: z.number().int().positive(), digest: Digest }),
  items: z.array(ReadSetItem),
  candidates: z.array(CompiledCandidate),
  /** A decision stage that puts a candidate without trusted authority to a person (`untrustedAuthority: "ask"`). */
  untrustedAuthority: z.literal('ask').optional(),
  /**
   * Provider permission requests a person answered (DecisionRequests about `permission`): the run
   * of this Context is allowed exactly the `allow`ed ones and refused the others
   * (docs/permissions.md). Absent: none.
   */
  grants: z
    .array(
      z.object({
        requestId: z.string().min(1),
        key: z.string().min(1),
        action: z.string(),
        by: z.string(),
        answer: z.enum(['allow', 'refuse']),
      }),
    )
    .optional(),
});
export type ReadSetContext = z.infer<typeof ReadSetContext>;

/** A Context written before read sets: sources with a trust word, and the prompt inside it. */
export const SourcesContext = z.object({
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

export const ContextObject = z.union([ReadSetContext, SourcesContext]);
export type ContextObject = z.infer<typeof ContextObject>;

/** The prompt rendered from a Context; separate because it shows the Context's digest. */
export const PromptObject = z.object({ taskId: TaskId, context: Digest, text: z.string() });

/** A revision of the Task's Goal (`goal.revise`). */
export const GoalObject = z.object({
  taskId: TaskId,
  revision: z.number().int().positive(),
  goal: z.string().min(1),
  reason: z.string().default(''),
});

/** A decision as it was sent: the Context it names, the candidate chosen, why, and by whom. */
export const DecisionObject = z.object({
  taskId: TaskId,
  contextDigest: Digest,
  candidateId: z.string().min(1),
  rationale: z.string().default(''),
  decider: z.string().default('external'),
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

/**
 * An Effect's intent, committed before the adapter is called: what is performed, where, with which
 * input, under which request id. The request id is deterministic (Task, attempt, generation), so a
 * Host that dies before recording the answer finds the same one again.
 */
export const EffectIntentObject = z.object({
  taskId: TaskId,
  generation: z.number().int().positive(),
  requestId: z.string().min(1),
  candidateId: z.string().min(1),
  adapter: z.string().min(1),
  /** The adapter's binding identity (e.g. its endpoint), as the embedder registered it. */
  endpoint: z.string(),
  operation: z.string().min(1),
  target: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  inputDigest: Digest,
  /** The endpoint's identity as the adapter's `observe` stated it just before the intent (absent: it has none). */
  endpointIdentity: z.string().optional(),
  /** The target's version as observed then (null: the target did not exist). */
  targetVersion: z.string().nullable().optional(),
});
export type EffectIntentObject = z.infer<typeof EffectIntentObject>;

/** An evidence file an adapter handed over with a receipt; `digest` names the blob with its bytes. */
export const EffectEvidenceEntry = z.object({
  name: z.string().min(1).max(200),
  mediaType: z.string().min(1).max(200),
  digest: Digest,
  bytes: z.number().int().nonnegative(),
});
export type EffectEvidenceEntry = z.infer<typeof EffectEvidenceEntry>;

/** What the adapter answered for an Effect: the receipt of `perform`, or one found by `lookup`. */
export const EffectReceiptObject = z.object({
  taskId: TaskId,
  requestId: z.string().min(1),
  via: z.enum(['perform', 'lookup']),
  receipt: z.unknown(),
  /**
   * The evidence files handed over with the receipt (`withEvidence`), each a blob written in the
   * same commit; boot checks them as it checks any object an event references. Absent: none (and
   * in every receipt written before evidence files).
   */
  evidence: z.array(EffectEvidenceEntry).optional(),
});
export type EffectReceiptObject = z.infer<typeof EffectReceiptObject>;

/**
 * What a DecisionRequest is about: an Effect left unknown, a provider's permission request, an
 * operator question, or a chosen candidate whose authority is not trusted.
 */
export const RequestAbout = z.enum(['effect', 'permission', 'operator', 'authority']);
export type RequestAbout = z.infer<typeof RequestAbout>;

/**
 * A DecisionRequest: everything a person (or a policy) needs to answer it without reading the
 * journal, and everything the Host needs to refuse an answer that came too late. Written before
 * the `request.open` event that makes it pending, so nobody is shown a request that is not durable.
 */
export const DecisionRequestObject = z.object({
  taskId: TaskId,
  requestId: z.string().min(1),
  generation: z.number().int().nonnegative(),
  about: RequestAbout,
  /** The Context the request is bound to (an answer after the Task left it is `decision_stale`). */
  contextDigest: Digest.nullable(),
  /** The action waiting on the answer, in words. */
  pendingAction: z.string().min(1),
  /** Who is responsible for answering. */
  participant: z.string().min(1),
  alternatives: z.array(z.object({ id: z.string().min(1), summary: z.string().min(1) })).min(1),
  evidence: z.array(z.string()),
  unresolvedClaims: z.array(z.string()),
  consequence: z.string(),
  reversibility: z.enum(['reversible', 'irreversible', 'unknown']),
  /** Whose authority the action needs. */
  authority: z.string(),
  budgetImpact: z.string(),
  /** The world revision the request is bound to: each trusted source's digest when it was opened. */
  worldRevision: z.array(z.object({ sourceId: z.string().min(1), digest: z.string().min(1) })),
  /** ISO time after which an answer is `decision_expired`; null: no deadline. */
  expiresAt: z.string().nullable(),
  /** What revokes the request before it is answered. */
  revokedWhen: z.array(z.string()),
  costOfDelay: z.string(),
  /** Answer ids the request takes (the alternatives' ids). */
  allowed: z.array(z.string().min(1)).min(1),
  /** A provider permission request this one escalates: its stable key and what it asked. */
  permission: z.record(z.string(), z.unknown()).optional(),
  /**
   * The candidate a request about `authority` asks to perform, and the sources it rests on that are
   * not trusted (empty: no source supports it at all).
   */
  candidate: z
    .object({
      id: z.string().min(1),
      untrustedSources: z.array(z.object({ sourceId: z.string().min(1), trust: Trust })),
    })
    .optional(),
});
export type DecisionRequestObject = z.infer<typeof DecisionRequestObject>;

export const OBJECT_KINDS = {
  'task-spec': TaskSpec,
  assignment: AssignmentObject,
  context: ContextObject,
  prompt: PromptObject,
  goal: GoalObject,
  decision: DecisionObject,
  proposal: ProposalObject,
  evidence: EvidenceObject,
  receipt: HarnessRunReceipt,
  verification: VerificationObject,
  outcome: OutcomeObject,
  'effect-intent': EffectIntentObject,
  'effect-receipt': EffectReceiptObject,
  'decision-request': DecisionRequestObject,
} as const;
