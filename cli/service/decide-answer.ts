import { z } from 'zod';
import { strictObject } from '../../base/index.js';
import type { SendResult } from '../../kernel/index.js';
import { SendKindAnswer } from './api-schemas.js';
import { httpStatusOf } from './http-io.js';

/** The body of `POST /tasks/:id/requests/:requestId/answer` (what `ordivon decide` sends). */
export const AnswerBody = strictObject({
  answer: z.string().min(1).max(200),
  answeredBy: z.string().min(1).max(200).optional(),
  note: z.string().max(2_000).optional(),
});
export type AnswerBody = z.infer<typeof AnswerBody>;

/** `:requestId` of `/tasks/:id/requests/:requestId/answer`. */
export const RequestIdParam = z.string().min(1).max(200);

/**
 * How an answer was taken, as the control API answers it and `ordivon decide --json` prints it:
 * the library's `SendResult` with the Task and request ids, and, when it was not admitted, an
 * `error` {code, message, path} (the refusal's code, its detail, the field it is about).
 */
export const DecideAnswer = z.object({
  taskId: z.string(),
  requestId: z.string(),
  kind: SendKindAnswer,
  admitted: z.boolean(),
  written: z.boolean(),
  revision: z.number().int(),
  state: z.string(),
  code: z.string().optional(),
  detail: z.string().optional(),
  duplicate: z.boolean().optional(),
  error: z.object({ code: z.string(), message: z.string(), path: z.string() }).optional(),
});
export type DecideAnswer = z.infer<typeof DecideAnswer>;

/** The field a refusal is about: the answer itself, the Task, or (every other code) the request. */
function pathOf(code: string, result: SendResult): string {
  if (code === 'answer_not_allowed') return 'answer';
  if (code === 'task_not_found') return 'taskId';
  return result.path ?? 'requestId';
}

/** An answer's result as the API and the CLI give it. */
export function decideAnswer(taskId: string, requestId: string, result: SendResult): DecideAnswer {
  const { path: _path, ...rest } = result;
  if (result.admitted) return { taskId, requestId, ...rest };
  const code = result.code ?? 'invalid_transition';
  const error = { code, message: result.detail ?? code, path: pathOf(code, result) };
  return { taskId, requestId, ...rest, error };
}

/** HTTP status of an answer: 200 admitted (or a retry of one), else its code's (`HTTP_STATUS_OF_CODE`, docs/service.md#http-statuses). */
export function statusOfAnswer(result: SendResult): number {
  if (result.admitted) return 200;
  return httpStatusOf(result.code ?? 'invalid_transition');
}
