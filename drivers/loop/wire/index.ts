import type { Conversation, ModelCall, ModelWire, WireFormat } from '../conversation.js';
import { anthropicMessages, anthropicRequest } from './anthropic-messages.js';
import { chatCompletions, chatRequest } from './chat-completions.js';
import type { WireRequest } from './http-stream.js';
import { responses, responsesRequest } from './responses.js';

/** Loop v0's model wire formats: one `ModelWire` per format, and the SSE and HTTP plumbing they share. */
export { anthropicMessages, anthropicRequest } from './anthropic-messages.js';
export { chatCompletions, chatRequest } from './chat-completions.js';
export { responses, responsesRequest } from './responses.js';
export { streamModel, type WireRequest } from './http-stream.js';
export { sseFrames, type SseFrame } from './sse.js';

const WIRES: Record<WireFormat, ModelWire> = {
  'chat-completions': chatCompletions,
  responses,
  'anthropic-messages': anthropicMessages,
};

const REQUESTS: Record<WireFormat, (conversation: Conversation, call: ModelCall) => WireRequest> = {
  'chat-completions': chatRequest,
  responses: responsesRequest,
  'anthropic-messages': anthropicRequest,
};

/** The wire that speaks `format`. */
export function wireFor(format: WireFormat): ModelWire {
  return WIRES[format];
}

/** The pure request builder of `format`: what its wire would send for a conversation. */
export function requestFor(format: WireFormat): (conversation: Conversation, call: ModelCall) => WireRequest {
  return REQUESTS[format];
}
