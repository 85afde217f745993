import { z } from 'zod';
import { taskEvent, type TaskEventDefinition } from './event-definition.js';
import {
  Digest,
  EvidenceMap,
  Generation,
  Id,
  Label,
  RevokedBy,
  Stale,
  StoredArtifactRefusal,
  VerificationCause,
  type ClaimKind,
  type RefKind,
} from './event-fields.js';

/**
 * The Task statechart's events, each defined once, here: its zod schema is the event's type, and
 * the rules beside it say who may send it, which of its fields name stored objects, which
 * identities it claims, what the kernel adds to what a caller sends, and how the kernel admits it
 * (the facts it establishes first, the object it writes). Everything else (the event union, the
 * type lists, the allow-list, the refs, what callers send, the kernel's admission) is derived from
 * these entries; docs/design.md, "Adding an external event", says what else a new one needs.
 *
 * Every event carries the stream `revision` it will occupy once appended and its `origin`:
 * `host` for facts the Host establishes, `external` for events from scripts, the CLI or a service.
 *
 * The kernel parses what callers send (each event's `sent` form, kernel/event-input.ts) before
 * an event reaches the machine. Stored events are verified by recovery and replayed without
 * parsing: nothing here runs per replayed event but the constant tables.
 */
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
      admission: {
        facts: ['next-generation', 'stage', 'harnesses'],
        object: {
          field: 'assignmentDigest',
          body: (e, { taskId, attempt }) => ({
            taskId,
            attempt,
            generation: e.generation,
            harness: e.harness,
            purpose: e.purpose,
            ...(e.stage !== undefined ? { stage: e.stage } : {}),
            instructions: e.instructions,
          }),
        },
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
    {
      external: false,
      refs: { receiptDigest: 'receipt', evidence: 'blob' },
      writes: ['stale'],
      admission: { facts: ['read-set'] },
    },
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
      admission: {
        facts: ['named-context', 'read-set'],
        object: {
          field: 'proposalDigest',
          body: (e, { taskId }) => ({
            taskId,
            generation: e.generation,
            evidence: e.evidence,
            summary: e.summary,
            proposer: e.proposer,
          }),
        },
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
    {
      external: false,
      refs: { verificationDigest: 'verification', outcomeDigest: 'outcome' },
      writes: ['stale'],
      admission: { facts: ['read-set'] },
    },
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
      admission: {
        facts: ['decision'],
        object: {
          field: 'decisionDigest',
          body: (e, { taskId }) => ({
            taskId,
            contextDigest: e.contextDigest,
            candidateId: e.candidateId,
            rationale: e.rationale,
            decider: e.decider,
          }),
        },
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
      /**
       * Why there are no receipts without asking (machine version 7): the adapter has no `lookup`
       * (`no-lookup`), or its lookup answered that it cannot say (`declined`). Absent: looked up.
       */
      unanswerable: z.enum(['no-lookup', 'declined']).optional(),
    },
    { external: false, refs: { receiptDigests: 'effect-receipt' } },
  ),
  taskEvent(
    'effect.refuse',
    {
      generation: Generation,
      candidateId: Label,
      /**
       * Re-checked before the intent (machine version 7): the target moved since the Context bound
       * it (`context_stale`, with `stale`), or the endpoint's identity or declared capabilities
       * changed (`effect_endpoint_changed`). Nothing was intended, nothing performed.
       */
      code: z.enum(['context_stale', 'effect_endpoint_changed']),
      reason: z.string().max(2_000),
      stale: Stale,
    },
    { external: false },
  ),
  taskEvent(
    'effect.conflict',
    {
      requestId: Id,
      /** The receipts whose input digest is not the intent's (recorded as objects, never as the Effect). */
      receiptDigests: z.array(Digest).min(1),
      reason: z.string().max(2_000),
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
      admission: { facts: ['answer'] },
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
      admission: {
        facts: ['next-goal-revision'],
        object: {
          field: 'goalDigest',
          body: (e, { taskId }) => ({ taskId, revision: e.goalRevision, goal: e.goal, reason: e.reason }),
        },
      },
    },
  ),
  /**
   * The fan-out intent of a branch stage (docs/branch-and-join.md): the children's Task ids,
   * deterministic from the Assignment, durable before any child is created.
   */
  taskEvent(
    'branch.open',
    {
      generation: Generation,
      branchId: Id,
      kind: z.enum(['parallel', 'fanOut']),
      /** `first_verified` or `all` (parallel); `all`, `any` or `at_least:N` (fanOut). */
      join: Label,
      children: z
        .array(z.strictObject({ taskId: Id, harness: Label, item: z.string().max(2_000).optional() }))
        .min(1)
        .max(64),
    },
    { external: false },
  ),
  /** A child's end, as evidence: its state then, whether it completed (verified) and its outcome. */
  taskEvent(
    'branch.observe',
    {
      generation: Generation,
      branchId: Id,
      child: Id,
      state: Label,
      verified: z.boolean(),
      outcomeDigest: Digest.nullable(),
      detail: z.string().max(2_000).optional(),
    },
    { external: false },
  ),
  /** The join, once: the children whose work the parent takes (none: the join cannot be satisfied). */
  taskEvent(
    'branch.join',
    {
      generation: Generation,
      branchId: Id,
      winners: z.array(Id).max(64),
      reason: z.string().min(1).max(2_000),
      /** The stage's artifacts among the winners' work merged into this Task's workspace, validated: name → digest. */
      evidence: EvidenceMap.default({}),
      refused: z.record(z.string().min(1).max(1_000), StoredArtifactRefusal).optional(),
      /** The paths the merge wrote (recorded, not used by guards). */
      merged: z.array(z.string().max(4_096)).max(100_000).default([]),
      sourceDigest: Digest.optional(),
    },
    { external: false, refs: { evidence: 'blob' } },
  ),
  taskEvent('task.cancel', { reason: z.string().min(1).max(2_000) }, { external: true }),
  taskEvent('task.steer', { message: z.string().min(1).max(10_000) }, { external: true }),
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
