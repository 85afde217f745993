import type { z } from 'zod';
import { describeIssues } from '../../../base/index.js';
import { ModelCallError, type ModelCall, type ModelFailureCode } from '../conversation.js';
import { sseFrames, type SseFrame } from './sse.js';

/** One streamed POST: where it goes, its headers besides `content-type`, and its JSON body. */
export interface WireRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** How much of an error response's body a `model_http_error` message quotes. */
const ERROR_BODY_CHARS = 500;

/**
 * Posts `request` and hands its Server-Sent Events to `read`, which returns the turn. The fetch
 * carries one AbortSignal that fires on `call.signal`, on the first-byte timer (headers and the
 * first body chunk) and on the whole-call timer, so each of them ends the HTTP request itself, not
 * only the wait for it; whichever fired first names the failure. Every timer and listener is
 * cleared on every path. `call.onProgress` is called once per event. Rejects only with
 * `ModelCallError`: a non-2xx status is `model_http_error`, a failed connection (before or during
 * the stream) `model_unreachable`, and what `read` throws passes through.
 */
export async function streamModel<T>(
  call: ModelCall,
  request: WireRequest,
  read: (frames: AsyncIterable<SseFrame>) => Promise<T>,
): Promise<T> {
  if (call.signal.aborted) throw new ModelCallError('model_aborted', 'the model call was aborted before it started');
  const stop = new AbortController();
  let failure: ModelCallError | undefined;
  const fail = (code: ModelFailureCode, message: string) => {
    failure ??= new ModelCallError(code, message);
    stop.abort(failure);
  };
  const onAbort = () => fail('model_aborted', `the model call was aborted${reasonOf(call.signal)}`);
  call.signal.addEventListener('abort', onAbort, { once: true });
  const callTimer = setTimeout(
    () => fail('model_call_timeout', `the model did not finish its answer within ${call.callTimeoutMs} ms`),
    call.callTimeoutMs,
  );
  const firstByteTimer = setTimeout(
    () => fail('model_first_byte_timeout', `the model sent no answer within ${call.firstByteTimeoutMs} ms`),
    call.firstByteTimeoutMs,
  );
  try {
    const response = await post(request, stop.signal);
    if (!response.body) throw new ModelCallError('model_answer_invalid', 'the response has no body');
    const frames = sseFrames(response.body, () => clearTimeout(firstByteTimer));
    return await read(withProgress(frames, call.onProgress));
  } catch (error) {
    throw failure ?? asModelCallError(error);
  } finally {
    clearTimeout(callTimer);
    clearTimeout(firstByteTimer);
    call.signal.removeEventListener('abort', onAbort);
    // Ends the connection if `read` returned or threw before the stream did.
    stop.abort();
  }
}

function reasonOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return `: ${reason.message}`;
  return typeof reason === 'string' ? `: ${reason}` : '';
}

async function post(request: WireRequest, signal: AbortSignal): Promise<Response> {
  const response = await fetch(request.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...request.headers },
    body: JSON.stringify(request.body),
    signal,
  });
  if (response.ok) return response;
  const text = await response.text();
  const quoted = text.length > ERROR_BODY_CHARS ? `${text.slice(0, ERROR_BODY_CHARS)}…` : text;
  throw new ModelCallError(
    'model_http_error',
    `HTTP ${response.status} from ${request.url}: ${quoted}`,
    response.status,
  );
}

async function* withProgress(frames: AsyncIterable<SseFrame>, onProgress?: () => void): AsyncGenerator<SseFrame> {
  for await (const frame of frames) {
    onProgress?.();
    yield frame;
  }
}

function asModelCallError(error: unknown): ModelCallError {
  if (error instanceof ModelCallError) return error;
  // fetch words a refused connection `fetch failed` and names the reason in `cause`.
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  const message = error instanceof Error ? error.message : String(error);
  return new ModelCallError('model_unreachable', `the model endpoint could not be reached (${message}${cause})`);
}

/**
 * Parses one event's data as JSON and then with `schema`; rejects with `model_answer_invalid`
 * naming the event and the offending field's path.
 */
export function parseEvent<S extends z.ZodType>(schema: S, frame: SseFrame, name: string): z.infer<S> {
  let json: unknown;
  try {
    json = JSON.parse(frame.data);
  } catch {
    throw invalidAnswer(`event ${name} is not JSON: ${frame.data.slice(0, 200)}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw invalidAnswer(`event ${name}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** A `model_answer_invalid` error: the endpoint answered, but not with a turn this wire can read. */
export function invalidAnswer(message: string): ModelCallError {
  return new ModelCallError('model_answer_invalid', message);
}

/** `baseUrl` without a trailing slash, so a path can be appended. */
export function trimBase(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}
