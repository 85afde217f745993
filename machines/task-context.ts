/** Rejection codes the statechart records when it retains an event without acting on it. */
export type RejectionReason =
  | 'stale_assignment'
  | 'missing_artifact'
  | 'context_mismatch'
  | 'identity_conflict'
  | 'verification_failed'
  | 'context_stale'
  | 'superseded'
  | 'candidate_unknown'
  | 'untrusted_authority'
  | 'action_failed'
  | 'effect_failed'
  | 'effect_unknown'
  | 'effect_endpoint_changed'
  | 'decision_unknown'
  | 'decision_not_pending'
  | 'decision_expired'
  | 'decision_revoked'
  | 'decision_stale'
  | 'answer_not_allowed'
  | 'harness_unknown'
  | 'join_unsatisfied';

/**
 * Every RejectionReason, for the check that each is a row of docs/errors.md
 * (test/kernel/refusal-codes.test.ts). A reason added to the union and not here does not compile.
 */
export const REJECTION_REASONS = [
  'stale_assignment',
  'missing_artifact',
  'context_mismatch',
  'identity_conflict',
  'verification_failed',
  'context_stale',
  'superseded',
  'candidate_unknown',
  'untrusted_authority',
  'action_failed',
  'effect_failed',
  'effect_unknown',
  'effect_endpoint_changed',
  'decision_unknown',
  'decision_not_pending',
  'decision_expired',
  'decision_revoked',
  'decision_stale',
  'answer_not_allowed',
  'harness_unknown',
  'join_unsatisfied',
] as const satisfies readonly RejectionReason[];
const LISTED: Exclude<RejectionReason, (typeof REJECTION_REASONS)[number]> extends never ? true : never = true;
void LISTED;

export interface Rejection {
  event: string;
  reason: RejectionReason;
  generation: number;
  revision: number;
  /** What was missing or mismatched, for the reader. */
  detail?: string;
}

export type DispatchStatus = 'intended' | 'acknowledged' | 'unknown' | 'observed';

/**
 * An external Effect's status: `intended` once its intent is durable (the adapter may be called),
 * `recorded` with a receipt, `unknown` when no answer came back (never performed again),
 * `failed` when the adapter said nothing was performed, `abandoned` when an operator classified it.
 */
export type EffectStatus = 'intended' | 'recorded' | 'unknown' | 'failed' | 'abandoned';

export interface EffectState {
  requestId: string;
  generation: number;
  candidateId: string;
  intentDigest: string;
  status: EffectStatus;
  /** How a lost answer is reconciled: by the Host's lookup, or by the next decision. */
  reconcile: 'host' | 'decision';
  receiptDigest: string | null;
}

export type RequestStatus = 'pending' | 'answered' | 'expired' | 'revoked';

/** One child of a branch as the parent keeps it (machine version 8). */
export interface BranchChild {
  harness: string;
  item: string | null;
  /** `open` until its end is observed; `verified` when it completed; `failed` otherwise. */
  status: 'open' | 'verified' | 'failed';
  /** The child's state at its end (null while open). */
  state: string | null;
  outcomeDigest: string | null;
  /** Its place among the children's ends (1 the first), null while open. */
  ended: number | null;
  /** Its end was observed after the join (retained, `superseded`). */
  late: boolean;
}

/** A branch stage's children and join (machine version 8): parallel Attempts or a fan-out of child Tasks. */
export interface BranchState {
  branchId: string;
  generation: number;
  kind: 'parallel' | 'fanOut';
  join: string;
  children: Record<string, BranchChild>;
  /** The children the join took, in order; null before the join. */
  winners: string[] | null;
  reason: string | null;
}

/** A DecisionRequest as the statechart keeps it; the full request is the object `digest` names. */
export interface RequestState {
  generation: number;
  digest: string;
  about: 'effect' | 'permission' | 'operator' | 'authority';
  contextDigest: string | null;
  /** Epoch ms after which an answer is expired; null: none. */
  expiresAt: number | null;
  status: RequestStatus;
  /** The admitted answer (status `answered`). */
  answer: string | null;
}

/**
 * The Task statechart's machine `context` (XState's extended state): plain JSON, nothing derived
 * from the clock or the process. Named apart from the Host's Context objects (docs/design.md, Words).
 */
export interface TaskMachineContext {
  taskId: string;
  attempt: number;
  /** The current Assignment generation: the fencing token. 0 before the first Assignment. */
  generation: number;
  specDigest: string | null;
  requiredArtifacts: string[];
  /** The Goal's current revision: 1 is the spec's goal (digest null), each `goal.revise` the next. */
  goal: { revision: number; digest: string | null };
  assignment: { generation: number; harness: string; purpose: string; digest: string } | null;
  contextDigest: string | null;
  /** The prompt rendered from the current Context (null before it, and for Contexts that held their prompt). */
  promptDigest: string | null;
  dispatch: { clientRequestId: string; status: DispatchStatus; jobId: string | null; generation: number } | null;
  /** Validated Artifacts held as evidence: name → digest and the generation that produced it. */
  evidence: Record<string, { digest: string; generation: number }>;
  lastReceipt: string | null;
  proposal: { generation: number; digest: string } | null;
  /** The decision admitted for the current Assignment's Context (a decision stage), null before one. */
  decision: { generation: number; contextDigest: string; candidateId: string; digest: string } | null;
  /**
   * A decision whose candidate's authority is not trusted, held while a person is asked
   * (`authorizing`, machine version 6): approved, it becomes `decision`. Null otherwise.
   */
  asked: { generation: number; contextDigest: string; candidateId: string; digest: string } | null;
  /** The admitted candidate's action, once the Host performed it. */
  action: { generation: number; candidateId: string; ok: boolean } | null;
  /** The Task's latest external Effect (machine version 4), null before one. */
  effect: EffectState | null;
  /** DecisionRequests by id (machine version 4): each consumed at most once. */
  requests: Record<string, RequestState>;
  verification: { generation: number; digest: string; passed: boolean; sourceDigest: string } | null;
  outcome: { digest: string; revision: number } | null;
  /**
   * The latest branch (a `parallel` or `fanOut` stage's children and join; machine version 8),
   * kept past its Assignment so later stages' Contexts name its children's outcomes; null before one.
   */
  branch: BranchState | null;
  /**
   * How many events the statechart has retained and rejected, in all. Each one is in the journal
   * with its code (`disposition`); the context keeps only the count and the latest, so a Task's
   * state does not grow with its history (machine version 2; version 1 kept every rejection).
   */
  rejected: number;
  /** The latest rejection, with what was missing or mismatched; null before the first. */
  lastRejection: Rejection | null;
  cancelReason: string | null;
}

/** @deprecated The former name of {@link TaskMachineContext}; removed in the next release. */
export type TaskContext = TaskMachineContext;

export const EMPTY_TASK_CONTEXT: TaskMachineContext = {
  taskId: '',
  attempt: 0,
  generation: 0,
  specDigest: null,
  requiredArtifacts: [],
  goal: { revision: 1, digest: null },
  assignment: null,
  contextDigest: null,
  promptDigest: null,
  dispatch: null,
  evidence: {},
  lastReceipt: null,
  proposal: null,
  decision: null,
  asked: null,
  action: null,
  effect: null,
  requests: {},
  verification: null,
  outcome: null,
  branch: null,
  rejected: 0,
  lastRejection: null,
  cancelReason: null,
};
