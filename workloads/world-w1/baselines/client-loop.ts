import type { W1Fault, W1ResultRow, W1Variant } from './result-row.js';

/** The variants a plain client runs (no Host): (a), (b), (c). */
export const BASELINE_VARIANTS = ['a-retry', 'b-key', 'c-lookup'] as const satisfies readonly W1Variant[];
export type BaselineVariant = (typeof BASELINE_VARIANTS)[number];

/** How long a send or a call that no fault holds waits for its answer. */
export const ANSWER_WAIT_MS = 30_000;

/**
 * What a plain client can do against one surface (the provider's HTTP API, the web app's form),
 * for one effect: send it, look it up, and live through what the fault does after a lost answer.
 */
export interface PlainClient {
  /**
   * Sends the effect once under `key` (an idempotency key, a form's note). `held`: the send whose
   * answer the fault holds, made with the short timeout. `done`: an answer says it was done;
   * `refused`: the provider proved nothing was done; `lost`: no answer, it may have been done.
   */
  send(key: string, held: boolean): Promise<'done' | 'refused' | 'lost'>;
  /** (c)'s lookup of what `key` did: `absent` only when the provider says so. */
  lookUp(key: string): Promise<'found' | 'absent' | 'unknown'>;
  /** What strikes after the first lost answer, before the client tries again (a restart, a window passing). */
  incident(): Promise<void>;
  /** Whether the provider, now, deduplicates a second send under the same key (an order's key within its window). */
  deduplicates(): boolean;
}

/** What the client concluded and its own tally; the performs are read from the records by the caller. */
export type ClientRun = Pick<W1ResultRow, 'outcome' | 'sends' | 'unsafeRedispatches' | 'staleEvidenceUsed'> & {
  /** When the first send left (after a death: when the new client started). */
  started: number;
};

/**
 * One plain client's recovery, the same on every surface: it sends; on a refusal it tries again;
 * on a lost answer (a) re-sends under a fresh key, (b) under the same key, (c) looks the key up
 * and re-sends under a fresh one unless found. On `host-sigkill` the first client dies with its
 * send unanswered and the one that starts the job over remembers nothing: a key derived from the
 * job (b's) survives, keys made per send (a's, c's) do not. The world moved before the first send
 * on `identity-changed` and `target-changed`, and the client never looks again: every send is stale.
 */
export async function runPlainClient(
  variant: BaselineVariant,
  fault: W1Fault,
  reference: string,
  client: PlainClient,
  maxSends: number,
): Promise<ClientRun> {
  const stale = fault === 'identity-changed' || fault === 'target-changed';
  let started = Date.now();
  let sends = 0;
  let unsafe = 0;
  let attempt = 1;
  let life = 1;
  const keyOf = (n: number) =>
    life === 1 || variant === 'b-key' ? `${reference}.req-${n}` : `${reference}.life-${life}.req-${n}`;
  let key = keyOf(attempt);
  let outcome: 'succeeded' | 'failed' = 'failed';
  let unknown = false; // an earlier send may have committed and nobody knows

  while (sends < maxSends) {
    sends += 1;
    const held = sends === 1 && (fault === 'delay-past-timeout' || fault === 'host-sigkill');
    const answer = await client.send(key, held);
    if (answer === 'done') {
      outcome = 'succeeded';
      break;
    }
    if (answer === 'refused') {
      // The provider proved nothing was performed; trying again is safe (and futile).
      attempt += 1;
      if (variant !== 'b-key') key = keyOf(attempt);
      continue;
    }
    unknown = true;
    if (sends === 1 && fault === 'host-sigkill') {
      started = Date.now();
      life = 2;
      attempt = 1;
      key = keyOf(attempt);
      if (!(variant === 'b-key' && client.deduplicates())) unsafe += 1;
      continue;
    }
    if (sends === 1) await client.incident();
    if (variant === 'c-lookup') {
      const found = await client.lookUp(key);
      if (found === 'found') {
        outcome = 'succeeded';
        break;
      }
      if (found === 'absent') unknown = false;
    }
    if (sends >= maxSends) break;
    // The re-send: (a) and (c) as a fresh request, (b) under the same key.
    if (variant !== 'b-key') {
      attempt += 1;
      key = keyOf(attempt);
    }
    if (unknown && !(variant === 'b-key' && client.deduplicates())) unsafe += 1;
  }
  return { outcome, sends, unsafeRedispatches: unsafe, staleEvidenceUsed: stale ? sends : 0, started };
}
