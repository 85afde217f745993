import { z } from 'zod';
import { zodIssue } from '../../base/index.js';
import type { SendRefused } from '../../kernel/index.js';
import { resolveStateRoot } from '../../store/index.js';
import { CliError, EXIT, type CliErrorCode } from '../cli-io.js';
import { isCliErrorCode } from '../cli-codes.js';
import { callService, type ServiceResponse } from './service-client.js';
import { DecideAnswer, type AnswerBody } from './decide-answer.js';
import { SendKindAnswer } from './api-schemas.js';
import { runningService, type ServiceFile } from './service-file.js';
import { QueuedView } from './queued-view.js';

/** The running service that holds the state root, if any (the write commands, `show`, `list` and `login` then talk to it). */
export function serviceFor(state: string | undefined): ServiceFile | null {
  return runningService(resolveStateRoot(state));
}

export async function call(info: ServiceFile, method: string, path: string, body?: unknown): Promise<ServiceResponse> {
  try {
    return await callService(info, method, path, body);
  } catch (error) {
    throw new CliError(
      'service_unreachable',
      `the service (pid ${info.pid}, ${info.socket ?? info.url}) holds the state root but does not answer: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** An `{ error: { code, message, path? } }` answer; a code the CLI does not know is `service_error`. */
const ErrorAnswer = z.object({
  error: z
    .object({
      code: z.string().optional(),
      message: z.string().optional(),
      path: z.string().optional(),
    })
    .optional(),
});

/** Turns an `{ error: { code, message, path? } }` answer into the CliError the local command would raise. */
export function refused(res: ServiceResponse): CliError {
  const error = ErrorAnswer.safeParse(res.body).data?.error;
  const code: CliErrorCode = error?.code !== undefined && isCliErrorCode(error.code) ? error.code : 'service_error';
  const usage = res.status === 400 || res.status === 413 || res.status === 415;
  return new CliError(code, error?.message ?? `HTTP ${res.status}`, {
    exit: usage ? EXIT.usage : EXIT.failed,
    path: error?.path || undefined,
  });
}

/** A send's answer as the service gives it: the library's `SendResult`, with the Task id. */
const SendAnswer = z.object({
  taskId: z.string().optional(),
  kind: SendKindAnswer,
  admitted: z.boolean(),
  written: z.boolean(),
  code: z.string().optional(),
  detail: z.string().optional(),
  path: z.string().optional(),
  revision: z.number().int(),
  state: z.string(),
  duplicate: z.boolean().optional(),
});

/** A service's answer to a send as the CLI reads it: a `SendResult` whose code is whatever string that service sent. */
export type SendAnswer = Omit<z.infer<typeof SendAnswer>, 'taskId'> & Pick<SendRefused, 'host' | 'url'>;

const ListAnswer = z.array(
  z.object({
    taskId: z.string(),
    state: z.string(),
    revision: z.number().int(),
    generation: z.number().int(),
    // Only on a Task that waits for a run slot.
    queued: QueuedView.optional(),
  }),
);

/** A row of `ordivon list`: a Task's state, revision, generation and, when it waits for a run slot, where. */
export type ListRow = z.infer<typeof ListAnswer>[number];

/** Parses what the service answered with `schema`; an answer that does not parse is `service_error`, naming the field. */
export function answer<S extends z.ZodType>(
  schema: S,
  body: unknown,
  what: string,
  code: 'service_error' | 'record_corrupt' = 'service_error',
): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = zodIssue(code, parsed.error);
  throw new CliError(issue.code, `${what} that does not parse at ${issue.path}: ${issue.message}`, {
    path: issue.path,
  });
}

const hasError = (body: unknown) => typeof body === 'object' && body !== null && 'error' in body;

/** `send` through the service: the same `SendResult` the library returns (a refused event included). */
export async function sendViaService(
  info: ServiceFile,
  taskId: string,
  event: unknown,
  eventId?: string,
): Promise<SendAnswer> {
  const body = eventId && typeof event === 'object' && event !== null ? { ...event, eventId } : event;
  const res = await call(info, 'POST', `/tasks/${encodeURIComponent(taskId)}/events`, body);
  if (hasError(res.body)) throw refused(res);
  return parseSendAnswer(res.body);
}

/**
 * `decide` through the service: `POST /tasks/:id/requests/:requestId/answer`. An answer the Task
 * took or refused comes back as the `DecideAnswer` the local command prints; a malformed request
 * or an unreachable service is a CliError.
 */
export async function decideViaService(
  info: ServiceFile,
  taskId: string,
  requestId: string,
  body: AnswerBody,
): Promise<DecideAnswer> {
  const path = `/tasks/${encodeURIComponent(taskId)}/requests/${encodeURIComponent(requestId)}/answer`;
  const res = await call(info, 'POST', path, body);
  if (typeof res.body !== 'object' || res.body === null || !('admitted' in res.body)) throw refused(res);
  return answer(DecideAnswer, res.body, 'the service answered an answer');
}

/**
 * `request open` through the service: `POST /tasks/:id/requests`. A request the Task opened,
 * already had or refused comes back as the answer the local command prints; a malformed request
 * or an unreachable service is a CliError.
 */
export async function openViaService(info: ServiceFile, taskId: string, request: unknown): Promise<DecideAnswer> {
  const res = await call(info, 'POST', `/tasks/${encodeURIComponent(taskId)}/requests`, request);
  if (typeof res.body !== 'object' || res.body === null || !('admitted' in res.body)) throw refused(res);
  return answer(DecideAnswer, res.body, 'the service answered a request open');
}

const CreatedAnswer = z.object({ taskId: z.string(), revision: z.number().int() });

/**
 * `task create` through the service: `POST /tasks` with the spec as read (its directories made
 * absolute: the service is on this machine). 201 is the created Task; a refusal (`invalid_spec`
 * 400, exit 2; `task_exists` 409, exit 1) the CliError the local command would raise.
 */
export async function createViaService(info: ServiceFile, spec: unknown): Promise<z.output<typeof CreatedAnswer>> {
  const res = await call(info, 'POST', '/tasks', spec);
  if (res.status !== 201) throw refused(res);
  return answer(CreatedAnswer, res.body, 'the service answered a Task creation');
}

/**
 * A new one-time page-login URL from the service: `POST /login` with the token `service.json`
 * names. A service on a unix socket serves no page: 404 `route_not_found`.
 */
export async function loginViaService(info: ServiceFile): Promise<string> {
  const res = await call(info, 'POST', '/login');
  if (res.status !== 201) throw refused(res);
  return answer(z.object({ login: z.string() }), res.body, 'the service answered a login').login;
}

/** Parses a service's answer to a send (without an `error`): the `SendResult`, or `service_error` naming the field. */
export function parseSendAnswer(body: unknown): SendAnswer {
  const { taskId: _ignored, ...result } = answer(SendAnswer, body, 'the service answered a send');
  return result;
}

/** `list` through the service: the rows `ordivon list --json` prints. */
export async function listViaService(info: ServiceFile): Promise<ListRow[]> {
  const res = await call(info, 'GET', '/tasks');
  if (res.status !== 200) throw refused(res);
  return parseListAnswer(res.body);
}

/** Parses a service's Task list: the rows `ordivon list --json` prints, or `service_error` naming the field. */
export function parseListAnswer(body: unknown): ListRow[] {
  return answer(ListAnswer, body, 'the service answered a Task list');
}
