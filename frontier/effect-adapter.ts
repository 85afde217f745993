/*
 * What an embedder implements for External Effects (docs/effects.md), apart from how the Host
 * performs and reconciles them (effect-actions.ts), so options can name it without importing that.
 */

/** The operation an Effect performs and what it acts on, as the candidate's action names them. */
export interface EffectTarget {
  readonly operation: string;
  readonly target: string;
}

/** What an embedder registers per adapter name (`openHost({ effectAdapters })`). */
export interface EffectAdapter {
  /** The binding identity recorded in each intent (an endpoint, an account): where the Effect goes. */
  readonly endpoint?: string;
  /**
   * Performs the operation once under `requestId` and resolves with its receipt (JSON). A throw
   * means the answer did not come back, unless `notPerformed` says the error proves nothing was done.
   * `intent` is what the candidate named besides its input (the intent object records all three).
   */
  perform(requestId: string, input: Record<string, unknown>, intent: EffectTarget): Promise<unknown>;
  /** Every receipt the system holds under `requestId` (none, one or more). Changes nothing. */
  lookup(requestId: string): Promise<unknown[]>;
  /** Whether an error `perform` threw proves nothing was performed (a refusal); default: never. */
  notPerformed?(error: unknown): boolean;
}
