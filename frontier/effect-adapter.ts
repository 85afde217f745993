/*
 * What an embedder implements for External Effects (docs/effects.md), apart from how the Host
 * performs and reconciles them (effect-actions.ts), so options can name it without importing that.
 */

export { ReceiptWithEvidence, withEvidence, type EffectEvidenceFile } from '../base/index.js';

/** The operation an Effect performs and what it acts on, as the candidate's action names them. */
export interface EffectTarget {
  readonly operation: string;
  readonly target: string;
  /**
   * Given to `perform` of an adapter with `observe` only: the target's version the intent records,
   * observed immediately before it and equal to what the deciding Context bound (null: the target
   * does not exist). An adapter can make its operation conditional on it (an `If-Match`, a git
   * push's expected old value), closing the gap between the re-check and `perform`.
   */
  readonly targetVersion?: string | null;
}

/**
 * What an adapter's `observe` reads of the endpoint and the target now. The Host binds each part
 * in the Context of a decision stage offering the candidate (docs/context.md) and compares them
 * again immediately before `perform` (docs/effects.md).
 */
export interface EffectObservation {
  /** The endpoint's identity as the provider states it now (a key fingerprint, an origin): compared with the intent's. */
  endpointIdentity: string;
  /** The target's current version (an ETag, a content digest); null when the target does not exist. */
  targetVersion: string | null;
  /** What the provider declares: whether it honours an idempotency key, whether and how long a lookup can answer. */
  capabilities: { idempotency: 'key' | 'provider-id' | 'none'; lookup: boolean; lookupWindowMs: number | null };
}

/** What an embedder registers per adapter name (`openHost({ effectAdapters })`). */
export interface EffectAdapter {
  /** The binding identity recorded in each intent (an endpoint, an account): where the Effect goes. */
  readonly endpoint?: string;
  /**
   * Performs the operation once under `requestId` and resolves with its receipt (JSON), or with
   * `withEvidence(receipt, files)` to hand over evidence files the Host keeps with it. A throw
   * means the answer did not come back, unless `notPerformed` says the error proves nothing was done.
   * `intent` is what the candidate named besides its input (the intent object records all three).
   */
  perform(requestId: string, input: Record<string, unknown>, intent: EffectTarget): Promise<unknown>;
  /**
   * Every receipt the system holds under `requestId` (none, one or more; each may be
   * `withEvidence(receipt, files)`, as for `perform`). Changes nothing. Absent,
   * or resolving to null: this provider cannot say what happened under `requestId` (no lookup, the
   * lookup window passed, the provider's id never came back), and the Host asks an operator.
   */
  lookup?(requestId: string, intent: EffectTarget): Promise<unknown[] | null>;
  /** Whether an error `perform` threw proves nothing was performed (a refusal); default: never. */
  notPerformed?(error: unknown): boolean;
  /** Reads the target and the endpoint now; changes nothing. */
  observe?(intent: EffectTarget): Promise<EffectObservation>;
  /** The input digest a receipt says it was performed for (`digestOf(input)`), if the receipt says. */
  receiptInputDigest?(receipt: unknown): string | undefined;
}
