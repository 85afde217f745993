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
import { startScriptedServer, type ScriptedAnswer } from './scripted-server.js';

/** One request the scripted model received, as recorded for assertions. */
export interface RecordedRequest {
  /** Arrival order at this server (0-based). */
  seq: number;
  path: string;
  /** The step index the body selected (model outputs already in the conversation); -1 when no step answered. */
  index: number;
  /**
   * Type of the step that answered (after `choose` / functions were resolved), or what answered
   * instead: `bad_request` (not this API's request), `not_found` (no such route), and for the
   * servers of other APIs `side` (a title or classifier call), `count_tokens`.
   */
  answeredWith: ResponsesStep['type'] | 'bad_request' | 'not_found' | 'side' | 'count_tokens';
  model: string | undefined;
  /** Names of the tools the request offered. */
  tools?: string[];
  /** True when the script had run out and the `exhausted` step answered. */
  exhausted?: boolean;
  /** Tool outputs the agent sent back in this request, oldest first. */
  toolOutputs: ToolOutput[];
  body: unknown;
}

/** What every scripted model server takes (the Responses model and the Gemini and Anthropic ones). */
export interface ScriptedModelOptions<B = ResponsesRequestBody> {
  script: readonly ScriptEntry<B>[];
  /** Answer once the script has run out (e.g. an adapter's extra tool-offering request); default: a message saying so (still labelled scripted). */
  exhausted?: ResponsesStep;
  /** Usage reported for steps that give none. */
  defaultUsage?: ScriptUsage;
}

/** A running scripted model server. */
export interface ScriptedModel {
  /**
   * Base URL in the form the agent's endpoint variable takes: for the Responses model a Codex model
   * provider's (`…/v1`), for the others no version path. Loopback only.
   */
  url: string;
  /** Every request received, in arrival order (live array). */
  requests: RecordedRequest[];
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Ends hanging streams and stops the server. */
  close(): Promise<void>;
}

export const DEFAULT_USAGE: ScriptUsage = {
  input_tokens: 100,
  cached_tokens: 0,
  output_tokens: 10,
  reasoning_tokens: 0,
};
export const EXHAUSTED_STEP: ResponsesStep = { type: 'message', text: 'scripted model: script exhausted' };

/**
 * Starts the SCRIPTED loopback model: an OpenAI Responses-API endpoint (`POST …/responses`, SSE)
 * on 127.0.0.1 with an ephemeral port, answering each request with the script step selected by the
 * request body (see `stepIndex`), so runs are deterministic. It is a test double for the LLM only:
 * the agent in front of it (`codex app-server`, `codex-acp`) is real. Every response carries
 * `x-ordivon-scripted: true`. Rejects if the port cannot be bound.
 */
export async function startResponsesModel(options: ScriptedModelOptions): Promise<ScriptedModel> {
  const script = options.script;
  const exhausted = options.exhausted ?? EXHAUSTED_STEP;
  const defaultUsage = options.defaultUsage ?? DEFAULT_USAGE;
  const server = await startScriptedServer<RecordedRequest>(({ method, path, json, seq }) => {
    const none = { seq, path, index: -1, model: undefined, toolOutputs: [], body: json };
    if (method !== 'POST' || !path.endsWith('/responses')) {
      const message = `scripted model serves POST …/responses only, not ${method} ${path}`;
      return { record: { ...none, answeredWith: 'not_found' }, answer: notFound(message) };
    }
    const parsed = ResponsesRequestBody.safeParse(json);
    if (!parsed.success) {
      const message = 'scripted model: request body is not a Responses request';
      return { record: { ...none, answeredWith: 'bad_request' }, answer: error(400, message) };
    }
    const body = parsed.data;
    const index = stepIndex(body);
    const outputs = toolOutputs(body);
    const step = resolveStep(script[index] ?? exhausted, { index, lastToolOutput: outputs.at(-1), body });
    const record: RecordedRequest = {
      seq,
      path,
      index,
      answeredWith: step.type,
      model: body.model,
      tools: toolNames(body),
      toolOutputs: outputs,
      body: json,
      ...(index >= script.length ? { exhausted: true } : {}),
    };
    let answer: ScriptedAnswer;
    if (step.type === 'http_error') answer = error(step.status, step.message);
    else if (step.type === 'hang') answer = { type: 'hang' };
    else {
      const usage = step.usage === undefined ? defaultUsage : ScriptUsage.parse(step.usage);
      answer = { type: 'sse', frames: stepFrames(step, index, usage) };
    }
    return { record, answer };
  });
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    requests: server.requests,
    waitForRequests: server.waitForRequests,
    close: server.close,
  };
}

/** Function tools by name, built-in ones (`web_search`, …) by type. */
function toolNames(body: ResponsesRequestBody): string[] {
  const tools = Array.isArray(body['tools']) ? (body['tools'] as unknown[]) : [];
  return tools.flatMap((t) => {
    const tool = t as { name?: unknown; type?: unknown };
    const name = typeof tool.name === 'string' ? tool.name : tool.type;
    return typeof name === 'string' ? [name] : [];
  });
}

function notFound(message: string): ScriptedAnswer {
  return { type: 'json', status: 404, body: { error: { message } } };
}

function error(status: number, message: string): ScriptedAnswer {
  return { type: 'json', status, body: { error: { message, type: 'scripted_error', code: null } } };
}
