import type { IncomingMessage, ServerResponse } from 'node:http';
import { CodedError, type CodedErrorOptions } from '../../base/index.js';
import type { HostError, HostErrorCode } from '../../kernel/index.js';
import { errorAnswer } from '../error-answer.js';

/** Error codes the control API adds to the library's (see the README's service table). */
export const API_ERROR_CODES = [
  'invalid_json',
  'invalid_request',
  'unsupported_media_type',
  'body_too_large',
  'unauthorized',
  'forbidden_host',
  'route_not_found',
  'method_not_allowed',
  'token_required',
  'socket_in_use',
  'internal',
  'draining',
] as const;
/** What the control API answers: its own codes and the library's (a HostError's, `apiErrorOf`). */
export type ApiErrorCode = (typeof API_ERROR_CODES)[number] | HostErrorCode;

/** A refusal of a request, answered as `{ error: { code, message, path? } }` with its code's status (`HTTP_STATUS_OF_CODE`, which `status` repeats). Nothing is written. */
export class ApiError extends CodedError<ApiErrorCode> {
  constructor(
    readonly status: number,
    code: ApiErrorCode,
    message: string,
    options: CodedErrorOptions = {},
  ) {
    super(code, message, options);
  }
}

/**
 * The HTTP status of every code the control API answers (a refusal's `{error: {code}}`, a
 * `SendResult`'s or an answer's `code`). docs/service.md#http-statuses is this table, and a test
 * compares them. 503 means "try again later, maybe elsewhere": the Host is draining, or cannot
 * reach its database (`storage_failed`: a Task whose creation was acknowledged is never answered
 * 404 meanwhile), or no longer holds the Task (`lease_lost`: it moved, ask again).
 */
export const HTTP_STATUS_OF_CODE: Readonly<Partial<Record<ApiErrorCode, number>>> = {
  invalid_json: 400,
  invalid_request: 400,
  invalid_spec: 400,
  invalid_event: 400,
  token_required: 400,
  socket_in_use: 400,
  invalid_config: 400,
  invalid_option: 400,
  unauthorized: 401,
  not_allowed: 403,
  forbidden_host: 403,
  route_not_found: 404,
  task_not_found: 404,
  decision_unknown: 404,
  method_not_allowed: 405,
  body_too_large: 413,
  unsupported_media_type: 415,
  internal: 500,
  not_serving: 503,
  draining: 503,
  storage_failed: 503,
  journal_failed: 503,
  lease_lost: 503,
  // Send it to the Host the answer names (`host`, `url`).
  task_elsewhere: 409,
  task_exists: 409,
  // Another question under an id the Task has: ask it under a new id.
  request_exists: 409,
};

/** Every code not in `HTTP_STATUS_OF_CODE` is a conflict with the Task's state or ownership: re-read it. */
export const DEFAULT_HTTP_STATUS = 409;

/** The status a code is answered with. */
export function httpStatusOf(code: string): number {
  return (HTTP_STATUS_OF_CODE as Record<string, number | undefined>)[code] ?? DEFAULT_HTTP_STATUS;
}

/** A library call's HostError as the API answers it: same code, message, path (`invalid_spec`'s field) and retryability. */
export function apiErrorOf(error: HostError): ApiError {
  return new ApiError(httpStatusOf(error.code), error.code, error.message, {
    path: error.path,
    retryable: error.retryable,
    cause: error,
  });
}

/** Largest request body the API reads (a Task spec or an event); larger bodies are refused 413. */
export const MAX_BODY_BYTES = 1 << 20;

/**
 * Reads a JSON body. Refuses a body that is not `application/json` (415: a browser form on
 * another origin cannot send one without a CORS preflight, which this API never answers), larger
 * than `MAX_BODY_BYTES` (413), or not JSON (400 `invalid_json`).
 */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    throw new ApiError(415, 'unsupported_media_type', 'send the body as Content-Type: application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ApiError(413, 'body_too_large', `the body passes ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new ApiError(400, 'invalid_json', `the body is not JSON: ${(error as Error).message}`, { cause: error });
  }
}

/** Writes one JSON response. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/** Writes an ApiError (or an unexpected error, as 500 `internal`). */
export function sendError(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (error instanceof ApiError) {
    sendJson(res, httpStatusOf(error.code), { error: errorAnswer(error) });
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  sendJson(res, 500, { error: errorAnswer(new ApiError(500, 'internal', message)) });
}
