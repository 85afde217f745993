import { z } from 'zod';
import { EffectEvidenceEntry, EffectReceiptObject } from '../objects/index.js';
import type { EventRecord } from '../store/index.js';

/** A Task's events (oldest first) and a reader of immutable objects, as `ordivon show` and the service read them. */
export interface EffectSource {
  events: Iterable<{ revision: number } & Pick<EventRecord, 'type' | 'data' | 'disposition'>>;
  object(digest: string): unknown;
}

/**
 * One Effect receipt the Task's stream holds, as `ordivon show` and `GET /tasks/:id` list it: the
 * event that recorded it (`effect.record`, `effect.reconcile`, or `effect.conflict` for a receipt
 * for other input), its digest, how it was obtained, the receipt as the adapter gave it, and each
 * evidence file handed over with it (its bytes are a blob of that digest in the store).
 */
export const TaskEffectView = z.object({
  revision: z.number().int(),
  event: z.enum(['effect.record', 'effect.reconcile', 'effect.conflict']),
  requestId: z.string(),
  receiptDigest: z.string(),
  via: EffectReceiptObject.shape.via,
  receipt: z.unknown(),
  evidence: z.array(EffectEvidenceEntry),
});
export type TaskEffectView = z.infer<typeof TaskEffectView>;

const RecordData = z.object({ requestId: z.string(), receiptDigest: z.string() });
const ManyData = z.object({ requestId: z.string(), receiptDigests: z.array(z.string()) });

/** Every Effect receipt the stream's events name, oldest first (parsed again: what comes back from disk is a boundary too). */
export function taskEffects(source: EffectSource): TaskEffectView[] {
  const effects: TaskEffectView[] = [];
  for (const e of source.events) {
    if (e.type !== 'effect.record' && e.type !== 'effect.reconcile' && e.type !== 'effect.conflict') continue;
    const data = e.type === 'effect.record' ? RecordData.parse(e.data) : ManyData.parse(e.data);
    const { requestId } = data;
    for (const receiptDigest of 'receiptDigest' in data ? [data.receiptDigest] : data.receiptDigests) {
      const body = EffectReceiptObject.parse(source.object(receiptDigest));
      effects.push({
        revision: e.revision,
        event: e.type,
        requestId,
        receiptDigest,
        via: body.via,
        receipt: body.receipt,
        evidence: body.evidence ?? [],
      });
    }
  }
  return effects;
}
