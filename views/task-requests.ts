import { z } from 'zod';
import { DecisionRequestObject } from '../objects/index.js';
import type { EventRecord } from '../store/index.js';

/** A Task's events (oldest first) and a reader of immutable objects, as `ordivon show` and the service read them. */
export interface RequestSource {
  events: Iterable<{ revision: number } & Pick<EventRecord, 'type' | 'data' | 'disposition' | 'at'>>;
  object(digest: string): unknown;
}

/** An answer as the journal recorded it: the one admitted, or one refused with its code. */
export const AnswerView = z.object({
  revision: z.number().int(),
  at: z.string(),
  answer: z.string(),
  answeredBy: z.string(),
  note: z.string(),
  /** The refusal's code; absent on the admitted answer. */
  code: z.string().optional(),
});
export type AnswerView = z.infer<typeof AnswerView>;

/**
 * One DecisionRequest as `ordivon show`, `GET /tasks/:id/requests` and the page list it: the
 * request object's fields, its status in the statechart, the answer admitted (by whom) and every
 * answer refused.
 */
export const TaskRequestView = DecisionRequestObject.extend({
  status: z.enum(['pending', 'answered', 'expired', 'revoked']),
  /** The revision of the `request.open` that made it pending. */
  openedAt: z.number().int(),
  answered: AnswerView.nullable(),
  refusals: z.array(AnswerView),
});
export type TaskRequestView = z.infer<typeof TaskRequestView>;

// What is read of the journal: stored events are parsed again here (a file read from disk).
const OpenData = z.object({ requestId: z.string(), requestDigest: z.string() });
const AnswerData = z.object({
  requestId: z.string(),
  answer: z.string(),
  answeredBy: z.string(),
  note: z.string(),
});
const Statuses = z.record(z.string(), z.object({ status: TaskRequestView.shape.status }));
const Held = z.record(
  z.string(),
  z.object({ about: z.string(), status: z.string(), answer: z.string().nullable(), digest: z.string() }),
);

/**
 * A provider permission request a person answered, as a Context records it (`grants`) and `show`
 * lists it: its run is allowed exactly the `allow`ed keys and refused the others.
 */
export const GrantView = z.object({
  requestId: z.string().min(1),
  key: z.string().min(1),
  action: z.string(),
  by: z.string(),
  answer: z.enum(['allow', 'refuse']),
});
export type GrantView = z.infer<typeof GrantView>;

/**
 * The grants the Task's next Context will record: every answered permission request (by id)
 * whose answer is `allow` or `refuse` and whose request names a key. The Host compiles Contexts
 * with it, and `ordivon show` and `GET /tasks/:id` list it. Throws (a ZodError) when the stored
 * context or a request object does not have its shape.
 */
export function taskGrants(source: Pick<RequestSource, 'object'>, requests: unknown): GrantView[] {
  const grants: GrantView[] = [];
  for (const [requestId, held] of Object.entries(Held.parse(requests ?? {})).sort(([a], [b]) => a.localeCompare(b))) {
    if (held.about !== 'permission' || held.status !== 'answered') continue;
    if (held.answer !== 'allow' && held.answer !== 'refuse') continue;
    const request = DecisionRequestObject.parse(source.object(held.digest));
    const key = request.permission?.['key'];
    if (typeof key !== 'string') continue;
    grants.push({ requestId, key, action: request.pendingAction, by: request.participant, answer: held.answer });
  }
  return grants;
}

/**
 * Every DecisionRequest of a Task, in the order they were opened, with the status the Task's
 * context (`requests`, machine version 4; none before it) gives. Throws (a ZodError) when a stored
 * event or request object does not have the shape it was written with.
 */
export function taskRequests(source: RequestSource, requests: unknown): TaskRequestView[] {
  const statuses = Statuses.parse(requests ?? {});
  const views = new Map<string, TaskRequestView>();
  for (const e of source.events) {
    if (e.type === 'request.open' && e.disposition.admitted) {
      const { requestId, requestDigest } = OpenData.parse(e.data);
      const body = DecisionRequestObject.parse(source.object(requestDigest));
      const status = statuses[requestId]?.status ?? 'pending';
      views.set(requestId, { ...body, status, openedAt: e.revision, answered: null, refusals: [] });
    } else if (e.type === 'request.answer') {
      const data = AnswerData.parse(e.data);
      const view = views.get(data.requestId);
      if (!view) continue; // decision_unknown: an answer to no request of this Task (in the rejections)
      const answer = { revision: e.revision, at: e.at, ...data };
      const { requestId: _id, ...recorded } = answer;
      if (e.disposition.admitted) view.answered = recorded;
      else view.refusals.push({ ...recorded, code: e.disposition.code });
    }
  }
  return [...views.values()];
}
