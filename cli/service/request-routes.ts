import type { Supervisor, SendResult, TaskReading } from '../../kernel/index.js';
import { taskRequests } from '../../views/index.js';
import { decideAnswer, statusOfAnswer, type AnswerBody, type DecideAnswer } from './decide-answer.js';
import { ApiError, httpStatusOf } from './http-io.js';

/** `GET /tasks/:id/requests`: every DecisionRequest of the Task (another Host's too, read from the shared history) with its fields, status, answer and refusals. */
export function listRequests(taskId: string, { view, events, getObject }: TaskReading) {
  const requests = taskRequests({ events, object: (digest) => getObject(digest).body }, view.context.requests);
  return { taskId, requests };
}

/**
 * `POST /tasks/:id/requests/:requestId/answer` with `{answer, answeredBy?, note?}` (parsed by the
 * route table: 400 `invalid_request` naming the field, nothing written): sends `request.answer`
 * through the supervisor (the statechart decides, on the Host's clock).
 */
export async function answerRequest(
  sup: Supervisor,
  taskId: string,
  requestId: string,
  body: AnswerBody,
): Promise<{ status: number; body: DecideAnswer }> {
  const result = await sup.send(taskId, { type: 'request.answer', requestId, ...body });
  return { status: statusOfAnswer(result), body: decideAnswer(taskId, requestId, result) };
}

/**
 * `POST /tasks/:id/requests` with an operator DecisionRequest (`OperatorRequestInput`): opens it
 * as the Host (`Supervisor.openRequestRaw`). 201 opened; 200 the same question already open under
 * that id (`duplicate`, nothing written); 400 `invalid_request` naming the field; otherwise the
 * refusal's status (404 `task_not_found`, 409 `request_exists`, …) with `error`. Nothing is
 * written unless it is opened.
 */
export async function openRequest(
  sup: Supervisor,
  taskId: string,
  body: unknown,
): Promise<{ status: number; body: DecideAnswer }> {
  const result = await sup.openRequestRaw(taskId, body);
  if (result.code === 'invalid_request')
    throw new ApiError(400, 'invalid_request', result.detail ?? 'invalid_request', { path: result.path });
  const named = body !== null && typeof body === 'object' ? (body as { requestId?: unknown }).requestId : undefined;
  const requestId = typeof named === 'string' ? named : '';
  return { status: statusOfOpen(result), body: decideAnswer(taskId, requestId, result) };
}

/** 201 opened, 200 the same question already open (nothing written), else the refusal's code's status. */
function statusOfOpen(result: SendResult): number {
  if (result.kind === 'admitted') return 201;
  if (result.kind === 'duplicate' && result.admitted) return 200;
  return httpStatusOf(result.code ?? 'invalid_transition');
}
