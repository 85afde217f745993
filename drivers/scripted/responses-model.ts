import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  ResponsesRequestBody,
  type ResponsesStep,
  ScriptUsage,
  resolveStep,
  stepIndex,
  toolOutputs,
  type ScriptEntry,
  type ToolOutput,
} from './responses-script.js';
import { stepFrames } from './responses-sse.js';
import { listenLoopback } from './listen-loopback.js';

/** One request the scripted model received, as recorded for assertions. */
export interface RecordedRequest {
  /** Arrival order at this server (0-based). */
  seq: number;
  path: string;
  /** The step index the body selected (model outputs already in the conversation). */
  index: number;
  /** Type of the step that answered (after `choose` / functions were resolved). */
  answeredWith: ResponsesStep['type'] | 'bad_request';
  model: string | undefined;
  /** Tool outputs Codex sent back in this request, oldest first. */
  toolOutputs: ToolOutput[];
  body: unknown;
}

export interface ResponsesModelOptions {
  script: readonly ScriptEntry[];
  /** Answer once the script has run out; default: a message saying so (still labelled scripted). */
  exhausted?: ResponsesStep;
  /** Usage reported for steps that give none. */
  defaultUsage?: ScriptUsage;
}

export interface ResponsesModel {
  /** Base URL for a Codex model provider (`…/v1`); loopback only. */
  url: string;
  /** Every request received, in arrival order (live array). */
  requests: RecordedRequest[];
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Ends hanging streams and stops the server. */
  close(): Promise<void>;
}

const DEFAULT_USAGE: ScriptUsage = { input_tokens: 100, cached_tokens: 0, output_tokens: 10, reasoning_tokens: 0 };
const SCRIPTED_HEADER = { 'x-ordivon-scripted': 'true' };

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', ...SCRIPTED_HEADER });
  response.end(JSON.stringify(body));
}

/**
 * Starts the SCRIPTED loopback model: an OpenAI Responses-API endpoint (`POST …/responses`, SSE)
 * on 127.0.0.1 with an ephemeral port, answering each request with the script step selected by the
 * request body (see `stepIndex`), so runs are deterministic. It is a test double for the LLM only:
 * the agent in front of it (`codex app-server`) is real. Every response carries
 * `x-ordivon-scripted: true`. Rejects if the port cannot be bound.
 */
export async function startResponsesModel(options: ResponsesModelOptions): Promise<ResponsesModel> {
  const script = options.script;
  const exhausted: ResponsesStep = options.exhausted ?? { type: 'message', text: 'scripted model: script exhausted' };
  const defaultUsage = options.defaultUsage ?? DEFAULT_USAGE;
  const requests: RecordedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const open = new Set<ServerResponse>();

  const record = (entry: RecordedRequest) => {
    requests.push(entry);
    for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (request.method !== 'POST' || !path.endsWith('/responses')) {
      return sendJson(response, 404, {
        error: { message: `scripted model serves POST …/responses only, not ${request.method} ${path}` },
      });
    }
    const text = await readBody(request);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = ResponsesRequestBody.safeParse(json);
    if (!parsed.success) {
      record({
        seq: requests.length,
        path,
        index: -1,
        answeredWith: 'bad_request',
        model: undefined,
        toolOutputs: [],
        body: json,
      });
      return sendJson(response, 400, { error: { message: 'scripted model: request body is not a Responses request' } });
    }
    const body = parsed.data;
    const index = stepIndex(body);
    const outputs = toolOutputs(body);
    const step = resolveStep(script[index] ?? exhausted, { index, lastToolOutput: outputs.at(-1), body });
    record({
      seq: requests.length,
      path,
      index,
      answeredWith: step.type,
      model: body.model,
      toolOutputs: outputs,
      body: json,
    });
    if (step.type === 'http_error') {
      return sendJson(response, step.status, { error: { message: step.message, type: 'scripted_error', code: null } });
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...SCRIPTED_HEADER });
    if (step.type === 'hang') {
      open.add(response);
      response.once('close', () => open.delete(response));
      response.write(': scripted model: this stream never completes\n\n');
      return;
    }
    const usage = step.usage === undefined ? defaultUsage : ScriptUsage.parse(step.usage);
    for (const frame of stepFrames(step, index, usage)) response.write(frame);
    response.end();
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        sendJson(response, 500, { error: { message: `scripted model failed: ${String(error)}` } });
      else response.destroy();
    });
  });
  const port = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    waitForRequests: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of open) response.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
