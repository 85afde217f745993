import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLoopback } from './listen-loopback.js';

/**
 * SCRIPTED MODEL — the HTTP side every loopback model server shares: read the body, let the API's
 * own code decide the answer, record the request, then send JSON, an SSE stream, or a stream that
 * never completes. Every response carries `x-ordivon-scripted: true`.
 */
export type ScriptedAnswer =
  | { type: 'json'; status: number; body: unknown }
  | { type: 'sse'; frames: readonly string[] }
  /** Opens an SSE stream, sends `frames` (if any) and never completes it (a stuck provider). */
  | { type: 'hang'; frames?: readonly string[] };

/** What the API-specific handler sees of one request. */
export interface ScriptedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  /** The body parsed as JSON; `undefined` when it is empty or not JSON. */
  json: unknown;
  /** The body as received (to tell an empty body from one that is not JSON). */
  text: string;
  /** Arrival order at this server (0-based). */
  seq: number;
}

export interface ScriptedServer<R> {
  port: number;
  /** Every request received, in arrival order (live array). */
  requests: R[];
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once no hanging stream is open: each was closed by its client (or by `close()`). */
  streamsClosed(): Promise<void>;
  /** Ends hanging streams, drops open connections and stops the server. */
  close(): Promise<void>;
}

export const SCRIPTED_HEADER = { 'x-ordivon-scripted': 'true' } as const;

/** An SSE stream is `data:` (and optionally `event:`) frames; see the API modules for their shape. */
export function sseData(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts a scripted model server on 127.0.0.1 with an ephemeral port. `handle` turns each request
 * into the record kept for assertions and the answer to send; it runs synchronously, so requests
 * are recorded in arrival order. A handler that throws answers HTTP 500 with the message (a broken
 * script is loud, never a silent success). Rejects if the port cannot be bound.
 */
export async function startScriptedServer<R>(
  handle: (request: ScriptedRequest) => { record: R; answer: ScriptedAnswer },
): Promise<ScriptedServer<R>> {
  const requests: R[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const open = new Set<ServerResponse>();
  const closedWaiters: (() => void)[] = [];

  const record = (entry: R) => {
    requests.push(entry);
    for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };

  const send = (response: ServerResponse, answer: ScriptedAnswer) => {
    if (answer.type === 'json') {
      response.writeHead(answer.status, { 'content-type': 'application/json', ...SCRIPTED_HEADER });
      response.end(JSON.stringify(answer.body));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...SCRIPTED_HEADER });
    if (answer.type === 'hang') {
      open.add(response);
      response.once('close', () => {
        open.delete(response);
        if (open.size === 0) for (const resolve of closedWaiters.splice(0)) resolve();
      });
      for (const frame of answer.frames ?? []) response.write(frame);
      response.write(': scripted model: this stream never completes\n\n');
      return;
    }
    for (const frame of answer.frames) response.write(frame);
    response.end();
  };

  const server = createServer((request, response) => {
    readBody(request)
      .then((text) => {
        const url = new URL(request.url ?? '/', 'http://127.0.0.1');
        const { record: entry, answer } = handle({
          method: request.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          json: parseJson(text),
          text,
          seq: requests.length,
        });
        record(entry);
        send(response, answer);
      })
      .catch((error: unknown) => {
        if (response.headersSent) return void response.destroy();
        send(response, {
          type: 'json',
          status: 500,
          body: { error: { message: `scripted model failed: ${String(error)}` } },
        });
      });
  });
  const port = await listenLoopback(server);
  return {
    port,
    requests,
    waitForRequests: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    streamsClosed: () =>
      open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => closedWaiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of open) response.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
