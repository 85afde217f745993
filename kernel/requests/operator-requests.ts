import { z } from 'zod';
import { strictObject, zodIssue } from '../../base/index.js';
import { DecisionRequestObject, type TaskSpec } from '../../objects/index.js';
import type { EventStore } from '../../store/index.js';
import type { Clock } from '../clock.js';
import { sendRequestOpen } from './decision-requests.js';
import { sendDuplicate, sendRefused, type SendResult } from '../send-result.js';
import type { TaskActor } from '../task-actor.js';

const { alternatives: _alternatives, ...asked } = DecisionRequestObject.omit({
  taskId: true,
  generation: true,
  about: true,
  contextDigest: true,
  worldRevision: true,
  expiresAt: true,
}).shape;

/**
 * What an embedder says to open an `operator` DecisionRequest (`Supervisor.openRequest`, the
 * body of `POST /tasks/:id/requests`, `ordivon request open`'s REQUEST_JSON): the request's
 * fields but those the Host adds (the Task, generation, bound Context and world revision,
 * deadline), and `ttlMs`, how long an answer is taken (absent or null: no deadline). An unknown
 * key is refused, naming the nearest known one: a typo must not drop a field.
 */
export const OperatorRequestInput = strictObject({
  ...asked,
  alternatives: z.array(strictObject({ id: z.string().min(1), summary: z.string().min(1) })).min(1),
  ttlMs: z.number().int().positive().nullable().optional(),
}).refine((input) => input.allowed.every((id) => input.alternatives.some((a) => a.id === id)), {
  message: 'every allowed answer must be one of the alternatives',
  path: ['allowed'],
});
export type OperatorRequestInput = z.input<typeof OperatorRequestInput>;

/** The fields of the question itself, compared when an id the Task already has is opened again. */
const QUESTION_FIELDS = Object.keys(asked).filter((k) => k !== 'requestId');

/**
 * Opens an `operator` DecisionRequest on `task` through the Host's own origin (request.open is a
 * Host-only fact: nobody outside opens a request by `send`), answering as `send` does, with every
 * refusal as data and nothing written for any of them:
 * - `invalid_request` (with the field's `path`): the input does not parse;
 * - an id the Task already has: the same question (every field but `ttlMs` equal) is a retry,
 *   `duplicate` with the revision that opened it; another question is `request_exists` with the
 *   first field that differs as `path` (asking again is a new request with a new id);
 * - a Task that takes no more events refuses `request.open` (`invalid_transition`).
 */
export async function openOperatorRequest(
  { task, store, spec, clock }: { task: TaskActor; store: EventStore; spec: TaskSpec; clock: Clock },
  input: unknown,
): Promise<SendResult> {
  const refuse = (code: 'invalid_request' | 'request_exists', detail: string, path: string): SendResult =>
    sendRefused({ code, detail, path }, { revision: task.revision, state: task.state });
  const parsed = OperatorRequestInput.safeParse(input);
  if (!parsed.success) {
    const { path, message } = zodIssue('invalid_request', parsed.error);
    return refuse('invalid_request', `decision request ${path}: ${message}`, path);
  }
  const { requestId } = parsed.data;
  const held = task.context.requests[requestId];
  if (held) {
    const stored = DecisionRequestObject.parse(store.getObject(held.digest, 'decision-request').body);
    const given = parsed.data as Record<string, unknown>;
    const differs =
      stored.about !== 'operator'
        ? 'requestId'
        : QUESTION_FIELDS.find(
            (k) => JSON.stringify((stored as Record<string, unknown>)[k]) !== JSON.stringify(given[k]),
          );
    if (differs !== undefined)
      return refuse(
        'request_exists',
        `task ${task.taskId} already has request ${requestId} (${held.about}, ${held.status}) and its ${differs} differs; ` +
          'asking again is a new request with a new id',
        differs,
      );
    return sendDuplicate({ admitted: true }, { revision: openedAt(store, task.taskId, requestId), state: task.state });
  }
  const handle = {
    taskId: task.taskId,
    revision: task.revision,
    state: task.state,
    context: task.context,
    spec,
    store,
    send: (event: Record<string, unknown>, attachments = {}) => task.send(event, 'host', attachments),
  };
  return sendRequestOpen({ clock, step: () => {} }, handle, 'operator', parsed.data);
}

/** The revision of the admitted `request.open` of `requestId` (0 if the journal has none). */
function openedAt(store: EventStore, taskId: string, requestId: string): number {
  for (const { revision, event } of store.stream(taskId))
    if (event.type === 'request.open' && event.disposition.admitted && event.data['requestId'] === requestId)
      return revision;
  return 0;
}
