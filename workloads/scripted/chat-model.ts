import { z } from 'zod';
import { zodIssue } from '../../base/index.js';
import { sseData, startScriptedServer, type ScriptedAnswer } from './scripted-server.js';

/**
 * SCRIPTED loopback model: an OpenAI chat-completions server (SSE or JSON) for testing real agents
 * such as `opencode acp` offline. It answers from a script, never from a model, and says so in
 * every response (`model: "<requested> (scripted)"`, `system_fingerprint: "scripted"`).
 *
 * Requests that offer no tools (opencode's "title" call) get `script.title`; every request that
 * offers tools consumes the next entry of `script.turns`. An exhausted script answers HTTP 400
 * `script_exhausted`, so a surplus model call is loud, not silently satisfied.
 */
export const ChatUsage = z.object({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
});

export type ChatUsage = z.infer<typeof ChatUsage>;

export const ChatToolCall = z.object({
  id: z.string().optional(),
  name: z.string().min(1),
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
});

export const ChatReply = z.object({
  /** Streamed as `delta.reasoning_content` before anything else. */
  reasoning: z.string().optional(),
  text: z.string().optional(),
  toolCalls: z.array(ChatToolCall).default([]),
  usage: ChatUsage.default({ prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 }),
  /** Answer with this HTTP error status instead of a completion. */
  httpStatus: z.number().int().min(400).max(599).optional(),
  /** Start the stream and never finish it (for cancellation tests). */
  hang: z.boolean().default(false),
});
export type ChatReply = z.infer<typeof ChatReply>;

/**
 * The two replies a scripted opencode turn is made of, at one usage: a call of opencode's own
 * `bash` tool (in the workspace), and the text that ends the turn.
 */
export function opencodeReplies(usage: ChatUsage): {
  bash(command: string, description: string): ChatReply;
  done(text: string): ChatReply;
} {
  return {
    bash: (command, description) => ({
      toolCalls: [{ name: 'bash', arguments: { command, description } }],
      usage,
      hang: false,
    }),
    done: (text) => ({ text, toolCalls: [], usage, hang: false }),
  };
}

export const ChatModelScript = z.object({
  title: z.string().default('Scripted title'),
  turns: z.array(ChatReply),
});
export type ChatModelScript = z.infer<typeof ChatModelScript>;
export type ChatModelScriptIn = z.input<typeof ChatModelScript>;

export const ChatRequestBody = z.looseObject({
  model: z.string().optional(),
  messages: z.array(z.unknown()),
  tools: z.array(z.unknown()).optional(),
  stream: z.boolean().optional(),
});
export type ChatRequestBody = z.infer<typeof ChatRequestBody>;

/** One request as the scripted model received it. */
export interface ChatRequestRecord {
  seq: number;
  method: string;
  path: string;
  kind: 'title' | 'turn' | 'other';
  /** Index into `script.turns` for `turn` requests. */
  turn?: number;
  body: unknown;
}

export interface ChatModel {
  /** Base URL to configure as the provider's `baseURL`, ending in `/v1`. */
  url: string;
  requests: ChatRequestRecord[];
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once no `hang` stream is open: each was closed by its client (or by `close()`). */
  streamsClosed(): Promise<void>;
  /** Stops listening and drops open (e.g. hanging) connections. */
  close(): Promise<void>;
}

/** What `startChatModel` takes besides its script. */
export interface ChatModelOptions {
  script: ChatModelScriptIn;
  /**
   * Which turn answers a request: `arrival` (default) the next one in the order requests arrive;
   * `conversation` the one after the assistant messages the request already holds, so a harness
   * that starts its conversation over is answered from the first turn again, as a model would be.
   */
  turnBy?: 'arrival' | 'conversation';
  /** Sees each turn request with the reply the script chose, and returns the reply that answers it (e.g. held, or quoting the request). */
  answer?: (reply: ChatReply, request: { turn: number; body: ChatRequestBody }) => ChatReply;
}

/** Starts the scripted model on 127.0.0.1 (random port). Rejects with the zod error if the script does not parse. */
export async function startChatModel(options: ChatModelOptions): Promise<ChatModel> {
  const script = ChatModelScript.parse(options.script);
  let nextTurn = 0;
  const assistantTurns = (body: ChatRequestBody) =>
    body.messages.filter((m) => typeof m === 'object' && m !== null && 'role' in m && m.role === 'assistant').length;

  const server = await startScriptedServer<ChatRequestRecord>(({ method, path, json, text, seq }) => {
    const record: ChatRequestRecord = { seq, method, path, kind: 'other', body: json };
    if (text && json === undefined) {
      return { record, answer: jsonAnswer(400, { error: { message: 'body is not JSON', code: 'invalid_json' } }) };
    }
    return { record, answer: route(method, record) };
  });

  function route(method: string, record: ChatRequestRecord): ScriptedAnswer {
    if (method === 'GET' && /\/v1\/models$/.test(record.path)) {
      return jsonAnswer(200, {
        object: 'list',
        data: [{ id: 'scripted-model', object: 'model', owned_by: 'scripted' }],
      });
    }
    if (method !== 'POST' || !/\/v1\/chat\/completions$/.test(record.path)) {
      return jsonAnswer(404, {
        error: { message: `scripted model: no route for ${method} ${record.path}`, code: 'no_route' },
      });
    }
    const body = ChatRequestBody.safeParse(record.body);
    if (!body.success) {
      const { code, path, message } = zodIssue('invalid_request', body.error);
      return jsonAnswer(400, { error: { message, code, param: path } });
    }
    const offersTools = (body.data.tools ?? []).length > 0;
    let reply: ChatReply;
    if (!offersTools) {
      record.kind = 'title';
      reply = ChatReply.parse({
        text: script.title,
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      });
    } else {
      record.kind = 'turn';
      const turn = options.turnBy === 'conversation' ? assistantTurns(body.data) : nextTurn++;
      record.turn = turn;
      const next = script.turns[turn];
      if (!next)
        return jsonAnswer(400, {
          error: {
            message: `scripted model: script exhausted after ${script.turns.length} turns`,
            code: 'script_exhausted',
          },
        });
      reply = options.answer ? ChatReply.parse(options.answer(next, { turn, body: body.data })) : next;
    }
    if (reply.httpStatus !== undefined) {
      return jsonAnswer(reply.httpStatus, {
        error: { message: `scripted model: scripted HTTP ${reply.httpStatus}`, type: 'scripted_error' },
      });
    }
    const model = `${body.data.model ?? 'model'} (scripted)`;
    if (body.data.stream) return streamReply(reply, model, record.seq);
    return jsonAnswer(200, completion(reply, model, record.seq));
  }

  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    requests: server.requests,
    waitForRequests: server.waitForRequests,
    streamsClosed: server.streamsClosed,
    close: server.close,
  };
}

function jsonAnswer(status: number, body: unknown): ScriptedAnswer {
  return { type: 'json', status, body };
}

function toolArguments(call: z.infer<typeof ChatToolCall>): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function completion(reply: ChatReply, model: string, seq: number): unknown {
  const calls = reply.toolCalls.map((c, i) => ({
    id: c.id ?? `call_${seq}_${i}`,
    type: 'function',
    function: { name: c.name, arguments: toolArguments(c) },
  }));
  const message =
    calls.length > 0
      ? { role: 'assistant', content: reply.text ?? null, tool_calls: calls }
      : { role: 'assistant', content: reply.text ?? '' };
  return {
    id: `chatcmpl-scripted-${seq}`,
    object: 'chat.completion',
    created: 0,
    model,
    system_fingerprint: 'scripted',
    choices: [{ index: 0, message, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' }],
    usage: reply.usage,
  };
}

/** A reply as chat.completion.chunk SSE frames, ending with a usage chunk and `[DONE]`. */
function streamReply(reply: ChatReply, model: string, seq: number): ScriptedAnswer {
  const base = {
    id: `chatcmpl-scripted-${seq}`,
    object: 'chat.completion.chunk',
    created: 0,
    model,
    system_fingerprint: 'scripted',
  };
  const frames: string[] = [];
  const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    frames.push(sseData({ ...base, choices, ...extra }));
  const delta = (d: Record<string, unknown>, finish: string | null = null) =>
    frame([{ index: 0, delta: d, finish_reason: finish }]);
  delta({ role: 'assistant', content: '' });
  // The connection stays open until the client gives up or close() drops it.
  if (reply.hang) return { type: 'hang', frames };
  if (reply.reasoning) delta({ reasoning_content: reply.reasoning });
  // Text in small pieces, as a real stream would deliver it.
  for (const piece of reply.text?.match(/[\s\S]{1,16}/g) ?? []) delta({ content: piece });
  reply.toolCalls.forEach((call, index) => {
    const args = toolArguments(call);
    delta({
      tool_calls: [
        {
          index,
          id: call.id ?? `call_${seq}_${index}`,
          type: 'function',
          function: { name: call.name, arguments: '' },
        },
      ],
    });
    const cut = Math.ceil(args.length / 2);
    delta({ tool_calls: [{ index, function: { arguments: args.slice(0, cut) } }] });
    delta({ tool_calls: [{ index, function: { arguments: args.slice(cut) } }] });
  });
  delta({}, reply.toolCalls.length > 0 ? 'tool_calls' : 'stop');
  frame([], { usage: reply.usage });
  frames.push('data: [DONE]\n\n');
  return { type: 'sse', frames };
}
