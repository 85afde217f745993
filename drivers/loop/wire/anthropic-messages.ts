import { z } from 'zod';
import type { Conversation, ModelCall, ModelTurn, ModelWire } from '../conversation.js';
import { invalidAnswer, parseEvent, streamModel, trimBase, type WireRequest } from './http-stream.js';
import type { SseFrame } from './sse.js';

/**
 * Anthropic Messages (`POST {baseUrl}/v1/messages`, streamed). The answer is content blocks by
 * `index`: text, and `tool_use` whose input streams as pieces of JSON text (`input_json_delta`).
 * Tool results go back as `tool_result` blocks of a user message.
 */
export const anthropicMessages: ModelWire = async (conversation, call) =>
  streamModel(call, anthropicRequest(conversation, call), readAnthropicStream);

/** The API version this wire's request and event shapes are written against. */
const ANTHROPIC_VERSION = '2023-06-01';

/** The request for one call (pure); rejects a tool call whose arguments are not a JSON object. */
export function anthropicRequest(conversation: Conversation, call: ModelCall): WireRequest {
  const body: Record<string, unknown> = {
    model: call.model,
    stream: true,
    max_tokens: call.maxOutputTokens,
    messages: anthropicMessagesOf(conversation),
  };
  if (conversation.system !== '') body['system'] = conversation.system;
  if (conversation.tools.length > 0) {
    body['tools'] = conversation.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.parameters,
    }));
  }
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
  if (call.apiKey) headers['x-api-key'] = call.apiKey;
  // `https://api.anthropic.com` and `https://api.anthropic.com/v1` both name the same API.
  const base = trimBase(call.baseUrl).replace(/\/v1$/, '');
  return { url: `${base}/v1/messages`, headers, body };
}

type Message = { role: 'user' | 'assistant'; content: unknown[] | string };

function anthropicMessagesOf(conversation: Conversation): Message[] {
  const messages: Message[] = [];
  for (const item of conversation.items) {
    if (item.kind === 'user') messages.push({ role: 'user', content: item.text });
    else if (item.kind === 'assistant') messages.push({ role: 'assistant', content: assistantBlocks(item) });
    else {
      const block = { type: 'tool_result', tool_use_id: item.callId, content: item.output };
      const last = messages.at(-1);
      // The results of one assistant message's calls answer it together, in one user message.
      if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(block);
      else messages.push({ role: 'user', content: [block] });
    }
  }
  return messages;
}

function assistantBlocks(item: Extract<Conversation['items'][number], { kind: 'assistant' }>): unknown[] {
  // The API refuses an empty text block.
  const text = item.text === '' ? [] : [{ type: 'text', text: item.text }];
  return [...text, ...item.toolCalls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: inputOf(c) }))];
}

function inputOf(call: { id: string; arguments: string }): Record<string, unknown> {
  let input: unknown;
  try {
    input = JSON.parse(call.arguments === '' ? '{}' : call.arguments);
  } catch {
    input = undefined;
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidAnswer(`tool call ${call.id}: its arguments are not a JSON object, which tool_use.input must be`);
  }
  return input as Record<string, unknown>;
}

const Block = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.record(z.string(), z.unknown()).optional(),
});
const Delta = z.looseObject({ type: z.string(), text: z.string().optional(), partial_json: z.string().optional() });
const Count = z.number().int().nonnegative();

/** The events this wire reads, by `type`; others (`ping`, thinking deltas, …) are skipped. */
const Events = {
  message_start: z.looseObject({
    message: z.looseObject({
      id: z.string().optional(),
      usage: z.looseObject({ input_tokens: Count, output_tokens: Count.optional() }),
    }),
  }),
  content_block_start: z.looseObject({ index: z.number().int().nonnegative(), content_block: Block }),
  content_block_delta: z.looseObject({ index: z.number().int().nonnegative(), delta: Delta }),
  content_block_stop: z.looseObject({ index: z.number().int().nonnegative() }),
  message_delta: z.looseObject({
    delta: z.looseObject({ stop_reason: z.string().nullish() }),
    usage: z.looseObject({ output_tokens: Count }).nullish(),
  }),
  message_stop: z.looseObject({}),
  error: z.looseObject({ error: z.looseObject({ type: z.string().optional(), message: z.string().optional() }) }),
} as const;
type EventType = keyof typeof Events;
type Event = { [K in EventType]: { type: K } & z.infer<(typeof Events)[K]> }[EventType];

const Envelope = z.looseObject({ type: z.string() });

interface BlockState {
  type: string;
  text: string;
  id?: string | undefined;
  name?: string | undefined;
  startInput: Record<string, unknown>;
  json: string;
}

interface AnthropicState {
  blocks: Map<number, BlockState>;
  usage: ModelTurn['usage'];
  stopReason?: string;
  responseId?: string;
  stopped: boolean;
}

async function readAnthropicStream(frames: AsyncIterable<SseFrame>): Promise<ModelTurn> {
  const state: AnthropicState = { blocks: new Map(), usage: { inputTokens: 0, outputTokens: 0 }, stopped: false };
  for await (const frame of frames) {
    const event = parseAnthropicEvent(frame);
    if (event) apply(state, event);
    if (state.stopped) return finalTurn(state, state.stopReason);
  }
  throw invalidAnswer('the stream ended before message_stop');
}

function parseAnthropicEvent(frame: SseFrame): Event | undefined {
  const { type } = parseEvent(Envelope, frame, frame.event ?? 'message');
  if (!(type in Events)) return undefined;
  return { ...parseEvent(Events[type as EventType], frame, type), type } as Event;
}

function apply(state: AnthropicState, event: Event): void {
  switch (event.type) {
    case 'message_start':
      state.responseId = event.message.id;
      state.usage = {
        inputTokens: event.message.usage.input_tokens,
        outputTokens: event.message.usage.output_tokens ?? 0,
      };
      return;
    case 'content_block_start': {
      const { type, text, id, name, input } = event.content_block;
      state.blocks.set(event.index, { type, text: text ?? '', id, name, startInput: input ?? {}, json: '' });
      return;
    }
    case 'content_block_delta':
      return applyDelta(state, event.index, event.delta);
    case 'message_delta':
      if (event.delta.stop_reason) state.stopReason = event.delta.stop_reason;
      // output_tokens here is the running total, not an increment.
      if (event.usage) state.usage = { ...state.usage, outputTokens: event.usage.output_tokens };
      return;
    case 'message_stop':
      state.stopped = true;
      return;
    case 'content_block_stop':
      return;
    case 'error':
      throw invalidAnswer(
        `the stream reported an error: ${[event.error.type, event.error.message].filter(Boolean).join(': ')}`,
      );
  }
}

function applyDelta(state: AnthropicState, index: number, delta: z.infer<typeof Delta>): void {
  const block = state.blocks.get(index);
  if (!block) throw invalidAnswer(`event content_block_delta: index ${index} names no started block`);
  if (delta.type === 'text_delta') block.text += delta.text ?? '';
  else if (delta.type === 'input_json_delta') block.json += delta.partial_json ?? '';
}

function finalTurn(state: AnthropicState, stopReason: string | undefined): ModelTurn {
  if (stopReason === undefined) throw invalidAnswer('message_stop came before a message_delta gave the stop_reason');
  const blocks = [...state.blocks.entries()].sort(([a], [b]) => a - b).map(([index, block]) => ({ index, block }));
  const toolCalls = blocks
    .filter(({ block }) => block.type === 'tool_use')
    .map(({ index, block }) => {
      if (!block.id || !block.name) throw invalidAnswer(`content block ${index}: a tool_use needs id and name`);
      return { id: block.id, name: block.name, arguments: toolArguments(index, block) };
    });
  return {
    text: blocks.map(({ block }) => (block.type === 'text' ? block.text : '')).join(''),
    toolCalls,
    usage: state.usage,
    stopReason,
    ...(state.responseId === undefined ? {} : { responseId: state.responseId }),
  };
}

/** The input as JSON text: the streamed pieces parsed whole, or the start's input when none came. */
function toolArguments(index: number, block: BlockState): string {
  if (block.json === '') return JSON.stringify(block.startInput);
  try {
    return JSON.stringify(JSON.parse(block.json));
  } catch {
    throw invalidAnswer(`content block ${index}: the tool_use input is not JSON: ${block.json.slice(0, 200)}`);
  }
}
