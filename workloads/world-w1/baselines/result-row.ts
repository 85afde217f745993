import { z } from 'zod';
import { Operation } from '../provider/index.js';

/**
 * The comparison's variants: (a) direct integration, retry on error under a fresh request; (b) the
 * idempotency key only, re-send under the same key; (c) receipt lookup only, look up and re-send
 * if nothing is found; (d) the Host path (intent, unknown, lookup, a DecisionRequest when no
 * lookup can answer), whose rows the Host-side harness adds in the same shape.
 */
export const W1Variant = z.enum(['a-retry', 'b-key', 'c-lookup', 'd-host']);
export type W1Variant = z.infer<typeof W1Variant>;

/**
 * What a trajectory performs: one of the provider's three operations (the HTTP surface), or
 * `webapp-orders`, the web app's order form submitted in Chromium (the browser surface).
 */
export const W1Operation = z.enum([...Operation.options, 'webapp-orders']);
export type W1Operation = z.infer<typeof W1Operation>;

/** The two surfaces the comparison runs on: the provider's HTTP API, the web app's form in a browser. */
export const W1Surface = z.enum(['http', 'browser']);
export type W1Surface = z.infer<typeof W1Surface>;

export const surfaceOf = (operation: W1Operation): W1Surface => (operation === 'webapp-orders' ? 'browser' : 'http');

/**
 * The trajectories' faults (docs/world-w1.md, "The comparison"). `host-sigkill`: the caller dies
 * between its send and the answer (the Host: a SIGKILLed process; a plain client: one that starts
 * its job over with nothing remembered).
 */
export const W1Fault = z.enum([
  'none',
  'commit-then-drop',
  'delay-past-timeout',
  'provider-restart',
  'lookup-expired',
  'identity-changed',
  'target-changed',
  'host-sigkill',
]);
export type W1Fault = z.infer<typeof W1Fault>;

const Count = z.number().int().nonnegative();

/**
 * One trajectory's result: one effect meant once, one (variant, operation, fault). `performs` and
 * every count derived from it are read from the provider's records file (the web app's, for
 * `webapp-orders`); `outcome` is what the client concluded (`asked`: it put the question to an
 * operator instead).
 */
export const W1ResultRow = z.strictObject({
  variant: W1Variant,
  operation: W1Operation,
  fault: W1Fault,
  /**
   * What the caller concluded: done; not done (after every send failed, or a refusal it believed);
   * put to an operator; or refused before any send because the world moved (the Host path's
   * re-check: the target or the endpoint changed since the decision).
   */
  outcome: z.enum(['succeeded', 'failed', 'asked', 'refused']),
  /** How many times the client sent the operation. */
  sends: Count,
  /** How many times the provider performed it (its records, per reference; the web app's orders, per input digest). */
  performs: Count,
  /** `performs - 1` when over one. */
  duplicateEffects: Count,
  /**
   * 1 when the provider never performed it and the caller ended believing it done or simply
   * failed: neither a question put to a person nor a refusal naming why it was not sent.
   */
  lostEffects: Count,
  /** 1 when the client concluded `succeeded` and nothing was performed. */
  falseSuccess: Count,
  /** 1 when the client concluded `failed` and it was performed. */
  falseFailure: Count,
  /**
   * Re-sends made while an earlier send's outcome was unknown, with neither a provider guarantee
   * that it deduplicates them (the same key within its window) nor a lookup that proved the
   * earlier send absent.
   */
  unsafeRedispatches: Count,
  /** Sends made after the target or the endpoint identity moved since the client observed it. */
  staleEvidenceUsed: Count,
  /** Questions put to a person. */
  operatorInterventions: Count,
  /** From the first send (the Host: the decision it acts on; after a kill: the restart) to the outcome, on the wall clock. */
  elapsedMs: Count,
  /** Durable objects the caller keeps for the Effect (the Host's intents, receipts and requests; none for a plain client). */
  stateObjects: Count,
});
export type W1ResultRow = z.infer<typeof W1ResultRow>;

/** The row's counts from the provider's performs and the client's own tally. */
export function resultRow(
  trajectory: Pick<W1ResultRow, 'variant' | 'operation' | 'fault' | 'outcome' | 'sends'> &
    Pick<W1ResultRow, 'unsafeRedispatches' | 'staleEvidenceUsed' | 'operatorInterventions' | 'elapsedMs'> &
    Partial<Pick<W1ResultRow, 'stateObjects'>>,
  performs: number,
): W1ResultRow {
  return W1ResultRow.parse({
    stateObjects: 0,
    ...trajectory,
    performs,
    duplicateEffects: Math.max(0, performs - 1),
    lostEffects: performs === 0 && (trajectory.outcome === 'succeeded' || trajectory.outcome === 'failed') ? 1 : 0,
    falseSuccess: trajectory.outcome === 'succeeded' && performs === 0 ? 1 : 0,
    falseFailure: trajectory.outcome === 'failed' && performs > 0 ? 1 : 0,
  });
}
