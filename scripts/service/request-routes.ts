import type { IncomingMessage } from 'node:http';
import { zodIssue } from '../../base/index.js';
import type { Supervisor, TaskReading } from '../../actors/supervisor.js';
import { taskRequests } from '../../actors/task-requests.js';
import { AnswerBody, RequestIdParam, decideAnswer, statusOfAnswer, type DecideAnswer } from './decide-answer.js';
import { ApiError, readJson } from './http-io.js';

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

const invalid = (message: string, path: string) =>
  new ApiError(400, 'invalid_request', `${path}: ${message}`, { path });
