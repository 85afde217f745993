import { z } from 'zod';
import { StaleSource, type RevokedBy } from '../../machines/index.js';
import type { EventRecord } from '../../store/index.js';

/** A journal event as the revocation search reads it. */
export type JournalEvent = { revision: number } & Pick<EventRecord, 'type' | 'data' | 'disposition'>;

// Stored events are parsed again here (a file read from disk); only the fields the search needs.
const Named = z.object({ requestId: z.string() });
const Opened = z.object({ requestId: z.string(), about: z.string() });
const Assigned = z.object({ generation: z.number().int().optional() });
const Revoked = z.object({ requestId: z.string(), reason: z.string() });
const StaleAnswer = z.object({ requestId: z.string(), stale: z.array(StaleSource).optional() });

/**
 * What revoked a DecisionRequest, read from the Task's journal as the statechart would have
 * applied it: the first admitted `assignment.commit` after it opened (a permission request outlives
 * Assignments), an admitted `request.revoke` naming it, or an answer to it refused `decision_stale`.
 * Undefined when none of them did before `before` (an exclusive revision).
 */
export function revocationOf(
  events: Iterable<JournalEvent>,
  requestId: string,
  before = Number.POSITIVE_INFINITY,
): RevokedBy | undefined {
  let about: string | undefined;
  let generation = 0;
  for (const e of events) {
    if (e.revision >= before) break;
    if (e.type === 'assignment.commit' && e.disposition.admitted) {
      generation = Assigned.parse(e.data).generation ?? generation + 1;
      if (about !== undefined && about !== 'permission')
        return { event: 'assignment.commit', revision: e.revision, generation };
      continue;
    }
    if (!e.type.startsWith('request.') || Named.safeParse(e.data).data?.requestId !== requestId) continue;
    if (e.type === 'request.open' && e.disposition.admitted) about = Opened.parse(e.data).about;
    else if (about === undefined) continue;
    else if (e.type === 'request.revoke' && e.disposition.admitted)
      return { event: 'request.revoke', revision: e.revision, reason: Revoked.parse(e.data).reason };
    else if (e.type === 'request.answer' && !e.disposition.admitted && e.disposition.code === 'decision_stale') {
      const stale = StaleAnswer.parse(e.data).stale;
      return { event: 'request.answer', revision: e.revision, ...(stale?.length ? { stale } : {}) };
    } else if (
      (e.type === 'request.answer' && e.disposition.admitted) ||
      (e.type === 'request.answer' && !e.disposition.admitted && e.disposition.code === 'decision_expired') ||
      (e.type === 'request.expire' && e.disposition.admitted)
    )
      return undefined; // consumed or expired before anything revoked it
  }
  return undefined;
}
