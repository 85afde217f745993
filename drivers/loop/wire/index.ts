import type { ModelWire, WireFormat } from '../conversation.js';
import { anthropicMessages } from './anthropic-messages.js';
import { chatCompletions } from './chat-completions.js';
import { responses } from './responses.js';

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

/** The wire that speaks `format`. */
export function wireFor(format: WireFormat): ModelWire {
  return WIRES[format];
}
