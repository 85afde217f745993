import { z } from 'zod';

/**
 * zod schemas for what the Codex app-server writes on stdout. Lenient on purpose: every object is
 * a `looseObject` (unknown fields pass through), because real responses carry more fields than the
 * generated types (`thread.environments`, `extra`, `emittedAtMs`, …) and grow between versions.
 * Only the fields the driver reads are required.
 */
export const RequestId = z.union([z.string(), z.number()]);
export type RequestId = z.infer<typeof RequestId>;

export const RpcError = z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() });
export type RpcError = z.infer<typeof RpcError>;

/** `method` + `id`: a request from the server (its ids are its own, independent of ours). */
export const ServerRequest = z.looseObject({ id: RequestId, method: z.string(), params: z.unknown().optional() });
export type ServerRequest = z.infer<typeof ServerRequest>;

/** `method` without `id`. */
export const ServerNotification = z.looseObject({ method: z.string(), params: z.unknown().optional() });
export type ServerNotification = z.infer<typeof ServerNotification>;

/**
 * `id` without `method`: the answer to one of our requests. The error branch comes first because
 * zod treats an `unknown` member as optional; the connection also checks that `result` is present.
 */
export const ServerResponse = z.union([
  z.looseObject({ id: RequestId, error: RpcError }),
  z.looseObject({ id: RequestId, result: z.unknown() }),
]);
export type ServerResponse = z.infer<typeof ServerResponse>;

// --- results of our requests -------------------------------------------------------------------

export const InitializeResult = z.looseObject({ userAgent: z.string().optional() });

export const ThreadStartResult = z.looseObject({
  thread: z.looseObject({
    id: z.string(),
    sessionId: z.string().nullish(),
    cliVersion: z.string().nullish(),
    model: z.string().nullish(),
    modelProvider: z.string().nullish(),
    path: z.string().nullish(),
  }),
  model: z.string().nullish(),
  modelProvider: z.string().nullish(),
});

export const TurnStartResult = z.looseObject({
  turn: z.looseObject({ id: z.string(), status: z.string().optional() }),
});

// --- notification params ---------------------------------------------------------------------

export const ThreadItem = z.looseObject({
  type: z.string(),
  id: z.string(),
  text: z.string().nullish(),
  status: z.string().nullish(),
});

export type ThreadItem = z.infer<typeof ThreadItem>;

export const ItemParams = z.looseObject({ item: ThreadItem, threadId: z.string(), turnId: z.string() });

export const TurnParams = z.looseObject({
  threadId: z.string(),
  turn: z.looseObject({
    id: z.string(),
    status: z.string(),
    error: z
      .looseObject({
        message: z.string(),
        codexErrorInfo: z.unknown().optional(),
        additionalDetails: z.string().nullish(),
      })
      .nullish(),
  }),
});

export const TokenUsageParams = z.looseObject({
  threadId: z.string(),
  turnId: z.string(),
  tokenUsage: z.looseObject({ total: z.looseObject({}), last: z.looseObject({}).optional() }),
});

export const ErrorParams = z.looseObject({
  error: z.looseObject({ message: z.string(), codexErrorInfo: z.unknown().optional() }),
  willRetry: z.boolean().optional(),
  threadId: z.string().optional(),
});

/** Item types that are tool invocations (counted in `toolItemsStarted` / `toolItemsCompleted`). */
export const TOOL_ITEM_TYPES: ReadonlySet<string> = new Set([
  'commandExecution',
  'fileChange',
  'mcpToolCall',
  'dynamicToolCall',
  'collabAgentToolCall',
  'webSearch',
  'imageView',
  'imageGeneration',
]);
