import { z } from 'zod';

/**
 * zod schemas for the raw ACP lines the driver reads off the wire. They are deliberately looser
 * than the SDK's: the receipt must count what an agent really sent, including update kinds this
 * SDK version does not know, statuses outside the enum and string request ids.
 */
export const JsonRpcId = z.union([z.string(), z.number(), z.null()]);
export type JsonRpcId = z.infer<typeof JsonRpcId>;

export const RawMessage = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: JsonRpcId.optional(),
  method: z.string().optional(),
  params: z.unknown().optional(),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});
export type RawMessage = z.infer<typeof RawMessage>;

export const SessionUpdateParams = z.looseObject({
  sessionId: z.string(),
  update: z.looseObject({ sessionUpdate: z.string() }),
});

export const ContentChunk = z.looseObject({
  content: z.looseObject({ type: z.string(), text: z.string().optional() }),
  messageId: z.string().nullish(),
});

export const ToolCallUpdate = z.looseObject({
  toolCallId: z.string(),
  status: z.string().nullish(),
  title: z.string().nullish(),
  /** What the tool produced: text content blocks are kept for the run's steps, other kinds ignored. */
  content: z
    .array(
      z.looseObject({
        type: z.string(),
        content: z.looseObject({ type: z.string(), text: z.string().optional() }).optional(),
      }),
    )
    .nullish()
    .catch(undefined),
});

export const InitializeResult = z.looseObject({
  protocolVersion: z.number().int(),
  agentInfo: z.looseObject({ name: z.string(), version: z.string().optional() }).nullish(),
});

export const NewSessionResult = z.looseObject({
  sessionId: z.string(),
  /** Unstable session model state. */
  models: z.looseObject({ currentModelId: z.string().optional() }).nullish(),
  /** Stable session config; the option of category `model` names the model in use (opencode). */
  configOptions: z.array(z.looseObject({ category: z.string().nullish(), currentValue: z.unknown() })).nullish(),
});

export const PromptResult = z.looseObject({
  stopReason: z.string(),
  usage: z.unknown().optional(),
  _meta: z.looseObject({ quota: z.unknown().optional() }).nullish(),
});
