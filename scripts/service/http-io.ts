import type { IncomingMessage, ServerResponse } from 'node:http';

/** Error codes the control API adds to the library's (see the README's service table). */
export type ApiErrorCode =
  | 'invalid_json'
  | 'invalid_request'
  | 'unsupported_media_type'
  | 'body_too_large'
  | 'unauthorized'
  | 'forbidden_host'
  | 'route_not_found'
  | 'method_not_allowed'
  | 'token_required'
  | 'socket_in_use';

/** A refusal of a request, answered as `{ error: { code, message, path? } }` with `status`. Nothing is written. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly path?: string,
  ) {
    super(message);
  }
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
    throw new ApiError(400, 'invalid_json', `the body is not JSON: ${(error as Error).message}`);
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
    sendJson(res, error.status, {
      error: { code: error.code, message: error.message, ...(error.path ? { path: error.path } : {}) },
    });
    return;
  }
  sendJson(res, 500, { error: { code: 'internal', message: (error as Error)?.message ?? String(error) } });
}
