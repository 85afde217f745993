import { z } from 'zod';
import type { Conversation, ModelCall, ModelTurn, ModelWire } from '../conversation.js';
import { invalidAnswer, parseEvent, streamModel, trimBase, type WireRequest } from './http-stream.js';
import type { SseFrame } from './sse.js';

/**
 * OpenAI Responses (`POST {baseUrl}/responses`, streamed, `store: false` so every call carries
 * the whole conversation). A function call is an output item: announced by
 * `response.output_item.added`, its arguments streamed, and given whole by
 * `response.output_item.done`, which is the one this wire trusts (some servers send only it).
 */
export const responses: ModelWire = async (conversation, call) =>
  streamModel(call, responsesRequest(conversation, call), readResponsesStream);

/** The request for one call (pure). */
export function responsesRequest(conversation: Conversation, call: ModelCall): WireRequest {
  const body: Record<string, unknown> = {
    model: call.model,
    stream: true,
    store: false,
    instructions: conversation.system,
    max_output_tokens: call.maxOutputTokens,
    input: conversation.items.flatMap(inputItems),
  };
  if (conversation.tools.length > 0) {
    body['tools'] = conversation.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
    }));
  }
  const headers: Record<string, string> = call.apiKey ? { authorization: `Bearer ${call.apiKey}` } : {};
  return { url: `${trimBase(call.baseUrl)}/responses`, headers, body };
}

function inputItems(item: Conversation['items'][number]): unknown[] {
  switch (item.kind) {
    case 'user':
      return [{ role: 'user', content: [{ type: 'input_text', text: item.text }] }];
    case 'tool_result':
      return [{ type: 'function_call_output', call_id: item.callId, output: item.output }];
    case 'assistant': {
      const text = item.text === '' ? [] : [{ role: 'assistant', content: [{ type: 'output_text', text: item.text }] }];
      const calls = item.toolCalls.map((c) => ({
        type: 'function_call',
        call_id: c.id,
        name: c.name,
        arguments: c.arguments,
      }));
      return [...text, ...calls];
    }
  }
}

const Item = z.looseObject({
  type: z.string(),
  id: z.string().optional(),
  call_id: z.string().optional(),
  name: z.string().optional(),
  arguments: z.string().optional(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).optional(),
});
type Item = z.infer<typeof Item>;

const Failure = z.looseObject({ code: z.string().nullish(), message: z.string().nullish() });
const Usage = z.looseObject({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
});
const Final = z.looseObject({ id: z.string().optional(), status: z.string().optional(), usage: Usage.nullish() });

/** The events this wire reads, by `type`; others (`response.created`, reasoning, …) are skipped. */
const Events = {
  'response.output_text.delta': z.looseObject({ delta: z.string() }),
  'response.output_item.added': z.looseObject({ item: Item }),
  'response.output_item.done': z.looseObject({ item: Item }),
  'response.function_call_arguments.delta': z.looseObject({ item_id: z.string(), delta: z.string() }),
  'response.function_call_arguments.done': z.looseObject({ item_id: z.string(), arguments: z.string() }),
  'response.completed': z.looseObject({ response: Final }),
  'response.incomplete': z.looseObject({ response: Final }),
  'response.failed': z.looseObject({ response: z.looseObject({ error: Failure.nullish() }) }),
  error: Failure,
} as const;
type EventType = keyof typeof Events;
type Event = { [K in EventType]: { type: K } & z.infer<(typeof Events)[K]> }[EventType];

const Envelope = z.looseObject({ type: z.string() });

interface ResponsesState {
  text: string;
  /** Text of finished message items, for a server that sends no text deltas. */
  itemText: string;
  /** Function calls by item id, in the order they began. */
  calls: Map<string, { id: string; name: string; arguments: string }>;
  turn?: ModelTurn;
}

async function readResponsesStream(frames: AsyncIterable<SseFrame>): Promise<ModelTurn> {
  const state: ResponsesState = { text: '', itemText: '', calls: new Map() };
  for await (const frame of frames) {
    const event = parseResponsesEvent(frame);
    if (event) apply(state, event);
    if (state.turn) return state.turn;
  }
  throw invalidAnswer('the stream ended before response.completed');
}

function parseResponsesEvent(frame: SseFrame): Event | undefined {
  // The type is in the data; the `event:` line, where sent, repeats it.
  const { type } = parseEvent(Envelope, frame, frame.event ?? 'message');
  if (!(type in Events)) return undefined;
  return { ...parseEvent(Events[type as EventType], frame, type), type } as Event;
}

function apply(state: ResponsesState, event: Event): void {
  switch (event.type) {
    case 'response.output_text.delta':
      state.text += event.delta;
      return;
    case 'response.output_item.added':
    case 'response.output_item.done':
      return applyItem(state, event.item, event.type);
    case 'response.function_call_arguments.delta':
      callOf(state, event.item_id, event.type).arguments += event.delta;
      return;
    case 'response.function_call_arguments.done':
      callOf(state, event.item_id, event.type).arguments = event.arguments;
      return;
    case 'response.completed':
    case 'response.incomplete':
      state.turn = finalTurn(state, event.response);
      return;
    case 'response.failed':
      throw invalidAnswer(`the response failed: ${describeFailure(event.response.error)}`);
    case 'error':
      throw invalidAnswer(`the stream reported an error: ${describeFailure(event)}`);
  }
}

function applyItem(state: ResponsesState, item: Item, type: string): void {
  if (item.type === 'message' && type === 'response.output_item.done') {
    state.itemText += (item.content ?? []).map((part) => part.text ?? '').join('');
  }
  if (item.type !== 'function_call') return;
  const key = item.id ?? item.call_id;
  if (!key || !item.call_id || !item.name)
    throw invalidAnswer(`event ${type}: item: a function_call needs id or call_id, and name`);
  const known = state.calls.get(key);
  // `added` carries the arguments empty; `done` carries them whole.
  const args =
    type === 'response.output_item.done' ? (item.arguments ?? known?.arguments ?? '') : (known?.arguments ?? '');
  state.calls.set(key, { id: item.call_id, name: item.name, arguments: args });
}

function callOf(state: ResponsesState, itemId: string, type: string): { arguments: string } {
  const call = state.calls.get(itemId);
  if (!call) throw invalidAnswer(`event ${type}: item_id ${itemId} names no function_call item`);
  return call;
}

function finalTurn(state: ResponsesState, response: z.infer<typeof Final>): ModelTurn {
  return {
    text: state.text === '' ? state.itemText : state.text,
    toolCalls: [...state.calls.values()],
    usage: { inputTokens: response.usage?.input_tokens ?? 0, outputTokens: response.usage?.output_tokens ?? 0 },
    stopReason: response.status ?? 'completed',
    ...(response.id === undefined ? {} : { responseId: response.id }),
  };
}

function describeFailure(failure: z.infer<typeof Failure> | null | undefined): string {
  if (!failure) return 'no error given';
  // A server that words its error differently is quoted as it sent it.
  return [failure.code, failure.message].filter(Boolean).join(': ') || JSON.stringify(failure).slice(0, 300);
}
