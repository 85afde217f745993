import { z } from 'zod';
import { zodIssue } from '../base/index.js';
import { DecisionRequestObject, type TaskSpec } from '../objects/index.js';
import type { EventStore } from '../store/index.js';
import type { Clock } from './clock.js';
import { openDecisionRequest } from './decision-requests.js';
import { HostError } from './errors.js';
import type { TaskActor } from './task-actor.js';

/**
 * What an embedder says to open an `operator` DecisionRequest (`Supervisor.openRequest`): the
 * request's fields but those the Host adds (the Task, generation, bound Context and world
 * revision, deadline), and `ttlMs`, how long an answer is taken (absent or null: no deadline).
 */
export const OperatorRequestInput = DecisionRequestObject.omit({
  taskId: true,
  generation: true,
  about: true,
  contextDigest: true,
  worldRevision: true,
  expiresAt: true,
})
  .extend({ ttlMs: z.number().int().positive().nullable().optional() })
  .refine((input) => input.allowed.every((id) => input.alternatives.some((a) => a.id === id)), {
    message: 'every allowed answer must be one of the alternatives',
    path: ['allowed'],
  });
export type OperatorRequestInput = z.input<typeof OperatorRequestInput>;

/**
 * Opens an `operator` DecisionRequest on `task` through the Host's own origin (request.open is a
 * Host-only fact: nobody outside opens a request by `send`). Throws `invalid_request` (with the
 * field) before anything is written when the input does not parse. Resolves with whether the
 * request is (now) the Task's: an id the Task already has writes nothing and is true; a Task that
 * takes no more events is false.
 */
export async function openOperatorRequest(
  task: TaskActor,
  store: EventStore,
  spec: TaskSpec,
  clock: Clock,
  input: unknown,
): Promise<boolean> {
  const parsed = OperatorRequestInput.safeParse(input);
  if (!parsed.success) {
    const { code, path, message } = zodIssue('invalid_request', parsed.error);
    throw new HostError(code, `decision request ${path}: ${message}`, { path });
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
  return openDecisionRequest({ clock, step: () => {} }, handle, 'operator', parsed.data);
}
