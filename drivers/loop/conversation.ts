import { z } from 'zod';

/**
 * Loop v0's conversation, in its own words: what it says to a model and what a model answered,
 * independent of the wire format (Chat Completions, Responses, Anthropic Messages). Each wire
 * module turns a `Conversation` into its request and its streamed answer into a `ModelTurn`.
 */

/** One tool the model may call: its name, what it is for, and its input's JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  /** A JSON Schema object (`type: 'object'`), as every wire format takes it. */
  parameters: Record<string, unknown>;
}

/** A tool call as the model asked for it; `arguments` is the raw JSON text the model wrote. */
export const ToolCall = z.strictObject({
  /** The model's id for the call (Chat Completions `id`, Responses `call_id`, Anthropic `tool_use.id`). */
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
export type ToolCall = z.infer<typeof ToolCall>;

/** Tokens one model call took, as the endpoint reported them (0 where it reported none). */
export const TurnUsage = z.strictObject({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
});
export type TurnUsage = z.infer<typeof TurnUsage>;

/** What one model call answered, once its stream ended. */
export const ModelTurn = z.strictObject({
  /** The assistant's text (the concatenated text deltas; '' when it only called tools). */
  text: z.string(),
  toolCalls: z.array(ToolCall),
  usage: TurnUsage,
  /** The endpoint's own stop reason (`stop`, `tool_calls`, `end_turn`, `tool_use`, `completed`, …). */
  stopReason: z.string(),
  /** The endpoint's id of the response, where it gives one. */
  responseId: z.string().optional(),
});
export type ModelTurn = z.infer<typeof ModelTurn>;

/**
 * One item of the conversation, in order. The first is always the Host's compiled Context (a
 * `user` item, `context: true`), which compaction never removes.
 */
export const ConversationItem = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('user'), text: z.string(), context: z.boolean().optional() }),
  z.strictObject({ kind: z.literal('assistant'), text: z.string(), toolCalls: z.array(ToolCall) }),
  z.strictObject({ kind: z.literal('tool_result'), callId: z.string().min(1), name: z.string(), output: z.string() }),
]);
export type ConversationItem = z.infer<typeof ConversationItem>;

/** What a wire module sends: the system instructions, the items, and the tools on offer. */
export interface Conversation {
  system: string;
  items: readonly ConversationItem[];
  tools: readonly ToolSpec[];
}

/** The three wire formats Loop v0 speaks; any endpoint compatible with one of them will do. */
export const WireFormat = z.enum(['chat-completions', 'responses', 'anthropic-messages']);
export type WireFormat = z.infer<typeof WireFormat>;

/** Where and how one model call goes. */
export interface ModelCall {
  /** The endpoint's base URL, e.g. `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`, `https://api.anthropic.com`. */
  baseUrl: string;
  model: string;
  /** The API key (sent as `Authorization: Bearer` or `x-api-key`), or none for a local server. */
  apiKey?: string | undefined;
  maxOutputTokens: number;
  /** Aborts the HTTP request at once: a cancel, the run's deadline. */
  signal: AbortSignal;
  /** How long the first byte of the answer may take; the call fails `model_first_byte_timeout` after it. */
  firstByteTimeoutMs: number;
  /** How long the whole call may take, streaming included; it fails `model_call_timeout` after it. */
  callTimeoutMs: number;
  /** Called on every streamed event: progress for a heartbeat. */
  onProgress?: () => void;
}

/** Why a model call failed, as data: a code the loop records and the Host can branch on. */
export type ModelFailureCode =
  | 'model_http_error'
  | 'model_unreachable'
  | 'model_first_byte_timeout'
  | 'model_call_timeout'
  | 'model_aborted'
  | 'model_answer_invalid';

/** A model call that did not give a turn. */
export class ModelCallError extends Error {
  constructor(
    readonly code: ModelFailureCode,
    message: string,
    /** The HTTP status, for `model_http_error`. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ModelCallError';
  }
}

/** One wire format: sends the conversation, reads the streamed answer to its end. Rejects only with `ModelCallError`. */
export type ModelWire = (conversation: Conversation, call: ModelCall) => Promise<ModelTurn>;
