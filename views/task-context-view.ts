import { z } from 'zod';
import { RevokedBy, StaleSource, VerificationCause } from '../machines/index.js';
import { CompiledCandidate, ReadSetItem, Trust } from '../objects/index.js';
import type { TaskRejection } from './task-runs.js';
import { GrantView } from './task-requests.js';

/**
 * One Context compiled for a Task, as `ordivon show`, the service's Task view and the page list
 * it: one per `context.compile` event. Items and candidates have their stored shape.
 */
export const TaskContextView = z.object({
  /** Revision of the `context.compile` event. */
  revision: z.number().int(),
  generation: z.number().int(),
  /** The stage it was compiled for (before read sets: its Assignment's stage, else purpose). */
  stage: z.string().nullable(),
  contextDigest: z.string(),
  /** The prompt object's digest; null before read sets (the prompt was inside the Context). */
  promptDigest: z.string().nullable(),
  /** The Goal revision it was bound to; null before read sets. */
  goalRevision: z.number().int().nullable(),
  /** `read-set`: items as compiled; `sources`: written before read sets, its sources mapped to items. */
  format: z.enum(['read-set', 'sources']),
  items: z.array(ReadSetItem),
  candidates: z.array(CompiledCandidate),
  /**
   * The permission requests answered before it was compiled, as it recorded them (its run is
   * allowed exactly the `allow`ed keys); empty when none, and before read sets. Absent from
   * services older than it.
   */
  grants: z.array(GrantView).optional(),
});
export type TaskContextView = z.infer<typeof TaskContextView>;

/** What made the Host refuse an event, read from the event and the Contexts it names. */
export const RefusalCause = z.discriminatedUnion('kind', [
  /** `context_stale`: a trusted item (or what it depends on, `via`) moved, as the kernel recorded it. */
  z.object({ kind: z.literal('stale'), ...StaleSource.shape }),
  /** `untrusted_authority`: a source supporting the chosen candidate, with its trust. */
  z.object({ kind: z.literal('support'), candidateId: z.string(), sourceId: z.string(), trust: Trust }),
  /** `candidate_unknown`: the id chosen and the candidates of the Context it named. */
  z.object({ kind: z.literal('candidate'), candidateId: z.string(), known: z.array(z.string()) }),
  /**
   * `superseded` / `context_mismatch`: the Context the event named and the Task's current one when
   * it arrived; `decidedAt`: the revision of the admitted decision that had already used the named one.
   */
  z.object({
    kind: z.literal('context'),
    named: z.string(),
    current: z.string().nullable(),
    decidedAt: z.number().int().nullable(),
  }),
  /** `action_failed`: the candidate whose command the Host ran, its Runtime job and exit code. */
  z.object({
    kind: z.literal('action'),
    candidateId: z.string(),
    jobId: z.string().nullable(),
    exitCode: z.number().int().nullable(),
  }),
  /**
   * `decision_revoked`: the request answered and what had revoked it: the admitted event and its
   * revision (an Assignment with its generation, a `request.revoke` with its reason, an answer
   * refused `decision_stale` with the sources that moved).
   */
  z.object({ kind: z.literal('revoked'), requestId: z.string(), ...RevokedBy.shape }),
  /**
   * `verification_failed`, as the Host recorded it (none in journals before machine version 5): a
   * frozen test not as pinned (`frozen`), the acceptance command's exit and output tails
   * (`command`), or a source digest that moved under it (`source`).
   */
  ...VerificationCause.options,
]);
export type RefusalCause = z.infer<typeof RefusalCause>;

/** A rejection with what caused it, for the codes whose causes the journal names. */
export type TaskRefusal = TaskRejection & { causes?: RefusalCause[] };
