import type { IncomingMessage } from 'node:http';
import { zodIssue } from '../../base/index.js';
import type { Supervisor, TaskReading } from '../../kernel/index.js';
import { taskRequests } from '../../views/index.js';
import { AnswerBody, RequestIdParam, decideAnswer, statusOfAnswer, type DecideAnswer } from './decide-answer.js';
import { ApiError, httpStatusOf, readJson } from './http-io.js';

/** `GET /tasks/:id/requests`: every DecisionRequest of the Task (another Host's too, read from the shared history) with its fields, status, answer and refusals. */
export function listRequests(taskId: string, { view, events, getObject }: TaskReading) {
  const requests = taskRequests({ events, object: (digest) => getObject(digest).body }, view.context.requests);
  return { taskId, requests };
}

/**
 * `POST /tasks/:id/requests/:requestId/answer` with `{answer, answeredBy?, note?}`: sends
 * `request.answer` through the supervisor (the statechart decides, on the Host's clock). A body
 * or request id that does not parse is 400 `invalid_request` naming the field, nothing written.
 */
export async function answerRequest(
  sup: Supervisor,
  taskId: string,
  rawRequestId: string,
  req: IncomingMessage,
): Promise<{ status: number; body: DecideAnswer }> {
  const requestId = RequestIdParam.safeParse(rawRequestId);
  if (!requestId.success) throw invalid(zodIssue('invalid_request', requestId.error).message, 'requestId');
  const body = AnswerBody.safeParse(await readJson(req));
  if (!body.success) {
    const { path, message } = zodIssue('invalid_request', body.error);
    throw invalid(message, path);
  }
  const result = await sup.send(taskId, { type: 'request.answer', requestId: requestId.data, ...body.data });
  return { status: statusOfAnswer(result), body: decideAnswer(taskId, requestId.data, result) };
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
  req: IncomingMessage,
): Promise<{ status: number; body: DecideAnswer }> {
  const body = await readJson(req);
  const result = await sup.openRequestRaw(taskId, body);
  if (result.code === 'invalid_request')
    throw new ApiError(400, 'invalid_request', result.detail ?? 'invalid_request', { path: result.path });
  const named = body !== null && typeof body === 'object' ? (body as { requestId?: unknown }).requestId : undefined;
  const requestId = typeof named === 'string' ? named : '';
  const status = result.admitted ? (result.written ? 201 : 200) : httpStatusOf(result.code ?? 'invalid_transition');
  return { status, body: decideAnswer(taskId, requestId, result) };
}

const invalid = (message: string, path: string) =>
  new ApiError(400, 'invalid_request', `${path}: ${message}`, { path });
