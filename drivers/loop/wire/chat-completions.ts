import { z } from 'zod';
import type { Conversation, ModelCall, ModelTurn, ModelWire, ToolCall } from '../conversation.js';
import { invalidAnswer, parseEvent, streamModel, trimBase, type WireRequest } from './http-stream.js';
import type { SseFrame } from './sse.js';

/**
 * OpenAI Chat Completions (`POST {baseUrl}/chat/completions`, streamed), the format most local and
 * hosted servers speak. Tool calls arrive as deltas keyed by `index`; usage comes in a last chunk
 * with no choices, which `stream_options.include_usage` asks for.
 */
export const chatCompletions: ModelWire = async (conversation, call) =>
  streamModel(call, chatRequest(conversation, call), readChatStream);

/** The request for one call (pure). */
export function chatRequest(conversation: Conversation, call: ModelCall): WireRequest {
  const body: Record<string, unknown> = {
    model: call.model,
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: call.maxOutputTokens,
    messages: [{ role: 'system', content: conversation.system }, ...chatMessages(conversation)],
  };
  // An empty `tools` array is refused by some servers; no tools means none offered.
  if (conversation.tools.length > 0) {
    body['tools'] = conversation.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  const headers: Record<string, string> = call.apiKey ? { authorization: `Bearer ${call.apiKey}` } : {};
  return { url: `${trimBase(call.baseUrl)}/chat/completions`, headers, body };
}

function chatMessages(conversation: Conversation): unknown[] {
  return conversation.items.map((item) => {
    switch (item.kind) {
      case 'user':
        return { role: 'user', content: item.text };
      case 'tool_result':
        return { role: 'tool', tool_call_id: item.callId, content: item.output };
      case 'assistant':
        if (item.toolCalls.length === 0) return { role: 'assistant', content: item.text };
        return {
          role: 'assistant',
          content: item.text === '' ? null : item.text,
          tool_calls: item.toolCalls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments },
          })),
        };
    }
  });
}

const ToolCallDelta = z.looseObject({
  index: z.number().int().nonnegative(),
  id: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const Chunk = z.looseObject({
  id: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        delta: z.looseObject({ content: z.string().nullish(), tool_calls: z.array(ToolCallDelta).nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .optional(),
  usage: z
    .looseObject({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() })
    .nullish(),
  // Some servers report a failure mid-stream as a chunk holding only `error`.
  error: z.looseObject({ message: z.string().optional() }).optional(),
});
type Chunk = z.infer<typeof Chunk>;

interface ChatState {
  text: string;
  calls: Map<number, { id: string; name: string; arguments: string }>;
  usage: ModelTurn['usage'];
  stopReason?: string;
  responseId?: string;
}

async function readChatStream(frames: AsyncIterable<SseFrame>): Promise<ModelTurn> {
  const state: ChatState = { text: '', calls: new Map(), usage: { inputTokens: 0, outputTokens: 0 } };
  for await (const frame of frames) {
    if (frame.data === '[DONE]') break;
    applyChunk(state, parseEvent(Chunk, frame, 'chat.completion.chunk'));
  }
  // A server that closes the stream without `[DONE]` still ended its answer if it gave a finish_reason.
  if (state.stopReason === undefined) throw invalidAnswer('the stream ended before a finish_reason');
  return {
    text: state.text,
    toolCalls: finishedCalls(state.calls),
    usage: state.usage,
    stopReason: state.stopReason,
    ...(state.responseId === undefined ? {} : { responseId: state.responseId }),
  };
}

function applyChunk(state: ChatState, chunk: Chunk): void {
  if (chunk.error)
    throw invalidAnswer(`the stream reported an error: ${chunk.error.message ?? JSON.stringify(chunk.error)}`);
  state.responseId ??= chunk.id;
  if (chunk.usage)
    state.usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
  const choice = chunk.choices?.[0];
  if (!choice) return;
  if (choice.finish_reason) state.stopReason = choice.finish_reason;
  state.text += choice.delta?.content ?? '';
  for (const delta of choice.delta?.tool_calls ?? []) {
    const call = state.calls.get(delta.index) ?? { id: '', name: '', arguments: '' };
    // The id and name come whole in the call's first delta; the arguments in pieces.
    if (delta.id) call.id = delta.id;
    if (delta.function?.name) call.name = delta.function.name;
    call.arguments += delta.function?.arguments ?? '';
    state.calls.set(delta.index, call);
  }
}

function finishedCalls(calls: ChatState['calls']): ToolCall[] {
  return [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, call]) => {
      if (!call.id || !call.name) throw invalidAnswer(`tool_calls.${index}: the call has no id or no name`);
      return call;
    });
}
