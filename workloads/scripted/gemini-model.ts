import { z } from 'zod';
import { exitCodeIn, outputText, type ScriptUsage, type ToolOutput } from './responses-script.js';
import type { RecordedRequest, ScriptedModel, ScriptedModelOptions } from './responses-model.js';
import { startScriptedServer, sseData, type ScriptedAnswer } from './scripted-server.js';
import { SIDE_USAGE, turnFor, type ModelTurn } from './agent-turn.js';

/**
 * SCRIPTED MODEL — a loopback Gemini API (v1beta) for a real `gemini --acp` (gemini-cli), which
 * reaches it through `GOOGLE_GEMINI_BASE_URL`:
 * - `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` answers the next script step as one
 *   SSE `data:` frame (a `functionCall` part, or text), with `usageMetadata`;
 * - `:generateContent` asking for JSON (`responseMimeType: application/json`: gemini-cli's model
 *   router and next-speaker checks) gets `classifierJson`, no step; otherwise a step as JSON;
 * - `:countTokens` answers a fixed count.
 * The step is chosen by how many model turns the conversation in the body already holds.
 */
const Part = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  functionCall: z.looseObject({ name: z.string() }).optional(),
  functionResponse: z.looseObject({ id: z.string().optional(), name: z.string(), response: z.unknown() }).optional(),
});
const Content = z.looseObject({ role: z.string().optional(), parts: z.array(Part).default([]) });

export const GeminiRequestBody = z.looseObject({
  contents: z.array(Content),
  tools: z
    .array(z.looseObject({ functionDeclarations: z.array(z.looseObject({ name: z.string() })).optional() }))
    .optional(),
  generationConfig: z.looseObject({ responseMimeType: z.string().optional() }).optional(),
});
export type GeminiRequestBody = z.infer<typeof GeminiRequestBody>;

export interface GeminiModelOptions extends ScriptedModelOptions<GeminiRequestBody> {
  /**
   * The JSON text for JSON-mode calls. The default satisfies both of gemini-cli 0.61's schemas:
   * the router's (`model_choice`, complexity) and the next-speaker check's (`next_speaker: user`,
   * so the turn ends after the scripted final text).
   */
  classifierJson?: Record<string, unknown>;
}

const CLASSIFIER_JSON = {
  reasoning: 'scripted',
  next_speaker: 'user',
  model_choice: 'flash',
  complexity_reasoning: 'scripted',
  complexity_score: 10,
};

const ROUTE = /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/;

/** A model turn is a `model` content carrying a call or visible text (thought-only content is not a turn). */
function stepIndex(body: GeminiRequestBody): number {
  return body.contents.filter(
    (c) => c.role === 'model' && c.parts.some((p) => p.functionCall || (p.text !== undefined && !p.thought)),
  ).length;
}

function toolOutputs(body: GeminiRequestBody): ToolOutput[] {
  return body.contents.flatMap((c) =>
    c.parts.flatMap((p) => {
      if (!p.functionResponse) return [];
      const response = p.functionResponse.response as { output?: unknown; error?: unknown } | undefined;
      const output = outputText(response?.output ?? response?.error ?? response);
      return [{ callId: p.functionResponse.id ?? p.functionResponse.name, output, exitCode: exitCodeIn(output) }];
    }),
  );
}

function usageMetadata(usage: ScriptUsage): Record<string, number> {
  return {
    promptTokenCount: usage.input_tokens,
    candidatesTokenCount: usage.output_tokens,
    cachedContentTokenCount: usage.cached_tokens,
    thoughtsTokenCount: usage.reasoning_tokens,
    totalTokenCount: usage.input_tokens + usage.output_tokens + usage.reasoning_tokens,
  };
}

function response(parts: unknown[], usage: ScriptUsage, model: string): Record<string, unknown> {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usageMetadata(usage),
    modelVersion: `${model} (scripted)`,
  };
}

function googleError(status: number, message: string): ScriptedAnswer {
  return { type: 'json', status, body: { error: { code: status, message, status: 'SCRIPTED_ERROR' } } };
}

function answerTurn(turn: ModelTurn, model: string, stream: boolean): ScriptedAnswer {
  if (turn.type === 'hang') return { type: 'hang' };
  if (turn.type === 'http_error') return googleError(turn.status, turn.message);
  const part = turn.type === 'call' ? { functionCall: { name: turn.name, args: turn.arguments } } : { text: turn.text };
  const body = response([part], turn.usage, model);
  return stream ? { type: 'sse', frames: [sseData(body)] } : { type: 'json', status: 200, body };
}

/** Starts the scripted Gemini model on 127.0.0.1 (ephemeral port); `url` is the `GOOGLE_GEMINI_BASE_URL`. */
export async function startGeminiModel(options: GeminiModelOptions): Promise<ScriptedModel> {
  const classifier = JSON.stringify(options.classifierJson ?? CLASSIFIER_JSON);
  const shellTool = (command: string) => ({ name: 'run_shell_command', arguments: { command } });
  const server = await startScriptedServer<RecordedRequest>(({ method, path, json, seq }) => {
    const none = { seq, path, index: -1, model: undefined, toolOutputs: [], body: json };
    const route = ROUTE.exec(path);
    if (method !== 'POST' || !route) {
      return {
        record: { ...none, answeredWith: 'not_found' },
        answer: googleError(404, `no route for ${method} ${path}`),
      };
    }
    const [, model = '', verb] = route;
    if (verb === 'countTokens') {
      return { record: { ...none, model, answeredWith: 'count_tokens' }, answer: okJson({ totalTokens: 100 }) };
    }
    const parsed = GeminiRequestBody.safeParse(json);
    if (!parsed.success) {
      return {
        record: { ...none, model, answeredWith: 'bad_request' },
        answer: googleError(400, 'not a Gemini request'),
      };
    }
    const body = parsed.data;
    const tools = (body.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));
    const outputs = toolOutputs(body);
    const seen = { seq, path, model, tools, toolOutputs: outputs, body: json };
    if (body.generationConfig?.responseMimeType === 'application/json') {
      const answer = response([{ text: classifier }], SIDE_USAGE, model);
      return { record: { ...seen, index: -1, answeredWith: 'side' }, answer: okJson(answer) };
    }
    const index = stepIndex(body);
    const { step, turn, exhausted } = turnFor(options, { index, lastToolOutput: outputs.at(-1), body }, shellTool);
    const answer = answerTurn(turn, model, verb === 'streamGenerateContent');
    return { record: { ...seen, index, answeredWith: step.type, ...(exhausted ? { exhausted } : {}) }, answer };
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests: server.requests,
    waitForRequests: server.waitForRequests,
    close: server.close,
  };
}

function okJson(body: unknown): ScriptedAnswer {
  return { type: 'json', status: 200, body };
}
