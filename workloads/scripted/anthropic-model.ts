import { z } from 'zod';
import { exitCodeIn, outputText, type ScriptUsage, type ToolOutput } from './responses-script.js';
import type { RecordedRequest, ScriptedModel, ScriptedModelOptions } from './responses-model.js';
import { sseFrame } from './responses-sse.js';
import { startScriptedServer, type ScriptedAnswer } from './scripted-server.js';
import { SIDE_USAGE, turnFor, type ModelTurn } from './agent-turn.js';

/**
 * SCRIPTED MODEL — a loopback Anthropic Messages API for the real Claude ACP adapters
 * (`claude-code-acp`, `claude-agent-acp`), which reach it through `ANTHROPIC_BASE_URL`:
 * - `POST /v1/messages` offering tools answers the next script step (a `tool_use` block, or text),
 *   streamed (`message_start` … `message_stop`) or as one JSON message, with usage;
 * - `POST /v1/messages` offering no tools (a title or classifier call) answers `sideText`, no step;
 * - `POST /v1/messages/count_tokens` answers a fixed count.
 * The step is chosen by how many assistant messages the conversation in the body already holds.
 */
const Block = z.looseObject({
  type: z.string(),
  tool_use_id: z.string().optional(),
  content: z.unknown().optional(),
});
const Message = z.looseObject({ role: z.string(), content: z.union([z.string(), z.array(Block)]) });

export const AnthropicRequestBody = z.looseObject({
  model: z.string().optional(),
  messages: z.array(Message),
  tools: z.array(z.looseObject({ name: z.string() })).optional(),
  stream: z.boolean().optional(),
});
export type AnthropicRequestBody = z.infer<typeof AnthropicRequestBody>;

export interface AnthropicModelOptions extends ScriptedModelOptions<AnthropicRequestBody> {
  /** Text for tool-less requests (titles, classifiers); default `Scripted title`. */
  sideText?: string;
}

function toolOutputs(body: AnthropicRequestBody): ToolOutput[] {
  return body.messages.flatMap((m) =>
    typeof m.content === 'string'
      ? []
      : m.content
          .filter((b) => b.type === 'tool_result')
          .map((b) => {
            const output = outputText(b.content);
            return { callId: b.tool_use_id ?? '', output, exitCode: exitCodeIn(output) };
          }),
  );
}

function usageOf(usage: ScriptUsage): Record<string, number> {
  return {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cache_read_input_tokens: usage.cached_tokens,
    cache_creation_input_tokens: 0,
  };
}

function anthropicError(status: number, message: string): ScriptedAnswer {
  return { type: 'json', status, body: { type: 'error', error: { type: 'scripted_error', message } } };
}

function answerTurn(turn: ModelTurn, index: number, model: string, stream: boolean): ScriptedAnswer {
  if (turn.type === 'hang') return { type: 'hang' };
  if (turn.type === 'http_error') return anthropicError(turn.status, turn.message);
  const id = `msg_scripted_${index}`;
  const block =
    turn.type === 'call'
      ? { type: 'tool_use', id: `toolu_scripted_${index}`, name: turn.name, input: turn.arguments }
      : { type: 'text', text: turn.text };
  const stop_reason = turn.type === 'call' ? 'tool_use' : 'end_turn';
  const usage = usageOf(turn.usage);
  const message = { id, type: 'message', role: 'assistant', model: `${model} (scripted)`, stop_sequence: null };
  if (!stream) return { type: 'json', status: 200, body: { ...message, content: [block], stop_reason, usage } };
  const start = block.type === 'tool_use' ? { ...block, input: {} } : { ...block, text: '' };
  const delta =
    block.type === 'tool_use'
      ? { type: 'input_json_delta', partial_json: JSON.stringify(turn.type === 'call' ? turn.arguments : {}) }
      : { type: 'text_delta', text: turn.type === 'text' ? turn.text : '' };
  return {
    type: 'sse',
    frames: [
      sseFrame('message_start', {
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      }),
      sseFrame('content_block_start', { index: 0, content_block: start }),
      sseFrame('content_block_delta', { index: 0, delta }),
      sseFrame('content_block_stop', { index: 0 }),
      sseFrame('message_delta', {
        delta: { stop_reason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      }),
      sseFrame('message_stop', {}),
    ],
  };
}

/** Starts the scripted Anthropic model on 127.0.0.1 (ephemeral port); `url` is the `ANTHROPIC_BASE_URL`. */
export async function startAnthropicModel(options: AnthropicModelOptions): Promise<ScriptedModel> {
  const sideText = options.sideText ?? 'Scripted title';
  const shellTool = (command: string) => ({ name: 'Bash', arguments: { command, description: 'Run a command' } });
  const server = await startScriptedServer<RecordedRequest>(({ method, path, json, seq }) => {
    const none = { seq, path, index: -1, model: undefined, toolOutputs: [], body: json };
    if (method === 'POST' && path === '/v1/messages/count_tokens') {
      return {
        record: { ...none, answeredWith: 'count_tokens' },
        answer: { type: 'json', status: 200, body: { input_tokens: 100 } },
      };
    }
    if (method !== 'POST' || path !== '/v1/messages') {
      return {
        record: { ...none, answeredWith: 'not_found' },
        answer: anthropicError(404, `no route for ${method} ${path}`),
      };
    }
    const parsed = AnthropicRequestBody.safeParse(json);
    if (!parsed.success) {
      return {
        record: { ...none, answeredWith: 'bad_request' },
        answer: anthropicError(400, 'not a Messages request'),
      };
    }
    const body = parsed.data;
    const model = body.model ?? 'model';
    const tools = (body.tools ?? []).map((t) => t.name);
    const outputs = toolOutputs(body);
    const seen = { seq, path, model: body.model, tools, toolOutputs: outputs, body: json };
    const stream = body.stream === true;
    if (tools.length === 0) {
      const answer = answerTurn({ type: 'text', text: sideText, usage: SIDE_USAGE }, -1, model, stream);
      return { record: { ...seen, index: -1, answeredWith: 'side' }, answer };
    }
    const index = body.messages.filter((m) => m.role === 'assistant').length;
    const { step, turn, exhausted } = turnFor(options, { index, lastToolOutput: outputs.at(-1), body }, shellTool);
    const record = { ...seen, index, answeredWith: step.type, ...(exhausted ? { exhausted } : {}) };
    return { record, answer: answerTurn(turn, index, model, stream) };
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests: server.requests,
    waitForRequests: server.waitForRequests,
    close: server.close,
  };
}
