import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import {
  ModelCallError,
  type Conversation,
  type ModelCall,
  type ModelFailureCode,
  type ModelTurn,
  type ModelWire,
} from '../../drivers/loop/conversation.js';
import {
  anthropicMessages,
  anthropicRequest,
  chatCompletions,
  responses,
  sseFrames,
  wireFor,
  type SseFrame,
} from '../../drivers/loop/wire/index.js';
import { startAnthropicModel } from '../../workloads/scripted/anthropic-model.js';
import { startChatModel } from '../../workloads/scripted/chat-model.js';
import { listenLoopback } from '../../workloads/scripted/listen-loopback.js';
import { startResponsesModel } from '../../workloads/scripted/responses-model.js';

// Loop v0's wire formats against the SCRIPTED loopback model servers the real-agent tests use,
// and against plain node:http servers for what those servers cannot say (held sockets, bad events).

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const TOOLS = [
  {
    name: 'read_file',
    description: 'Reads a file of the workspace.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];

function conversation(items: Conversation['items'] = []): Conversation {
  return {
    system: 'You are a scripted test.',
    items: [{ kind: 'user', text: 'The compiled Context.', context: true }, ...items],
    tools: TOOLS,
  };
}

function modelCall(baseUrl: string, overrides: Partial<ModelCall> = {}): ModelCall {
  return {
    baseUrl,
    model: 'test-model',
    maxOutputTokens: 1000,
    signal: new AbortController().signal,
    firstByteTimeoutMs: 10_000,
    callTimeoutMs: 10_000,
    ...overrides,
  };
}

/** The conversation after `turn`, its one tool call answered with `output`. */
function answered(turn: ModelTurn, output: string): Conversation {
  const call = turn.toolCalls[0]!;
  return conversation([
    { kind: 'assistant', text: turn.text, toolCalls: turn.toolCalls },
    { kind: 'tool_result', callId: call.id, name: call.name, output },
  ]);
}

async function rejection(promise: Promise<unknown>): Promise<ModelCallError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ModelCallError, `not a ModelCallError: ${String(error)}`);
    return error;
  }
  assert.fail('the call did not reject');
}

async function rejectsWith(promise: Promise<unknown>, code: ModelFailureCode): Promise<ModelCallError> {
  const error = await rejection(promise);
  assert.equal(error.code, code, error.message);
  return error;
}

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A loopback server answering every POST with `frames` as an SSE stream, recording what it got. */
async function serveFrames(frames: readonly string[]): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({ path: request.url ?? '', headers: request.headers, body: JSON.parse(text) });
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const frame of frames) response.write(frame);
      response.end();
    });
  });
  const port = await listenLoopback(server);
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${port}`, received };
}

/**
 * A loopback server that accepts each request and never answers it (`silent`), or sends its
 * headers and then nothing (`headers`); `closed` resolves once the client dropped the connection.
 */
async function holdingServer(mode: 'silent' | 'headers'): Promise<{ url: string; closed: Promise<void> }> {
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  const server = createServer((_request, response: ServerResponse) => {
    response.once('close', closed);
    if (mode === 'headers') {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
    }
  });
  const port = await listenLoopback(server);
  closers.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${port}`, closed: done };
}

const sse = (data: unknown, event?: string) =>
  `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const typed = (type: string, data: Record<string, unknown>) => sse({ type, ...data }, type);

describe('loop wire: Chat Completions against the scripted chat model', () => {
  it('reads a streamed tool call, then text, and threads the tool result back as a tool message', async () => {
    const model = await startChatModel({
      script: {
        turns: [
          {
            toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'a.txt' } }],
            usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 },
          },
          {
            text: 'The file says hi, in more than sixteen characters.',
            usage: { prompt_tokens: 30, completion_tokens: 9, total_tokens: 39 },
          },
        ],
      },
    });
    closers.push(model.close);
    let events = 0;
    const first = await chatCompletions(conversation(), modelCall(model.url, { onProgress: () => events++ }));
    assert.deepEqual(first, {
      text: '',
      toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }],
      usage: { inputTokens: 11, outputTokens: 5 },
      stopReason: 'tool_calls',
      responseId: 'chatcmpl-scripted-0',
    });
    // role, call start, two argument halves, finish, usage, [DONE]
    assert.equal(events, 7);

    const second = await chatCompletions(answered(first, 'hi'), modelCall(model.url));
    assert.deepEqual(second, {
      text: 'The file says hi, in more than sixteen characters.',
      toolCalls: [],
      usage: { inputTokens: 30, outputTokens: 9 },
      stopReason: 'stop',
      responseId: 'chatcmpl-scripted-1',
    });

    assert.equal(model.requests[1]?.path, '/v1/chat/completions');
    assert.deepEqual(model.requests[1]?.body, {
      model: 'test-model',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 1000,
      messages: [
        { role: 'system', content: 'You are a scripted test.' },
        { role: 'user', content: 'The compiled Context.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'hi' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'read_file', description: TOOLS[0]!.description, parameters: TOOLS[0]!.parameters },
        },
      ],
    });
  });

  it('rejects model_aborted when the call is aborted mid-stream, and the server sees the connection close', async () => {
    const model = await startChatModel({ script: { turns: [{ hang: true }] } });
    closers.push(model.close);
    const abort = new AbortController();
    // The scripted hang sends one chunk before it holds: abort on it, so the stream is open.
    const call = modelCall(model.url, { signal: abort.signal, onProgress: () => abort.abort() });
    await rejectsWith(chatCompletions(conversation(), call), 'model_aborted');
    await model.streamsClosed();
  });

  it('rejects model_call_timeout when a stream that started never ends, and closes the connection', async () => {
    const model = await startChatModel({ script: { turns: [{ hang: true }] } });
    closers.push(model.close);
    let events = 0;
    const call = modelCall(model.url, { callTimeoutMs: 200, onProgress: () => events++ });
    const error = await rejectsWith(chatCompletions(conversation(), call), 'model_call_timeout');
    assert.match(error.message, /200 ms/);
    assert.equal(events, 1, 'the stream had started (its one chunk arrived) when the call timed out');
    await model.streamsClosed();
  });

  it('rejects model_aborted without a request when the signal is already aborted', async () => {
    const model = await startChatModel({ script: { turns: [] } });
    closers.push(model.close);
    await rejectsWith(
      chatCompletions(conversation(), modelCall(model.url, { signal: AbortSignal.abort() })),
      'model_aborted',
    );
    assert.equal(model.requests.length, 0);
  });
});

describe('loop wire: Responses against the scripted Responses model', () => {
  it('reads a function call, then text, and threads function_call and function_call_output back as input', async () => {
    const model = await startResponsesModel({
      script: [
        {
          type: 'tool',
          name: 'read_file',
          arguments: { path: 'a.txt' },
          usage: { input_tokens: 21, output_tokens: 7 },
        },
        { type: 'message', text: 'It says hi.', usage: { input_tokens: 40, output_tokens: 4 } },
      ],
    });
    closers.push(model.close);
    const first = await responses(conversation(), modelCall(model.url));
    assert.deepEqual(first, {
      text: '',
      toolCalls: [{ id: 'call_scripted_0', name: 'read_file', arguments: '{"path":"a.txt"}' }],
      usage: { inputTokens: 21, outputTokens: 7 },
      stopReason: 'completed',
      responseId: 'resp_scripted_0',
    });

    const second = await responses(answered(first, 'hi'), modelCall(model.url));
    assert.deepEqual(second, {
      text: 'It says hi.',
      toolCalls: [],
      usage: { inputTokens: 40, outputTokens: 4 },
      stopReason: 'completed',
      responseId: 'resp_scripted_1',
    });

    const request = model.requests[1]!;
    assert.equal(request.path, '/v1/responses');
    assert.equal(request.index, 1, 'the server counted the function call in the input');
    assert.deepEqual(request.toolOutputs, [{ callId: 'call_scripted_0', output: 'hi', exitCode: undefined }]);
    assert.deepEqual(request.body, {
      model: 'test-model',
      stream: true,
      store: false,
      instructions: 'You are a scripted test.',
      max_output_tokens: 1000,
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'The compiled Context.' }] },
        { type: 'function_call', call_id: 'call_scripted_0', name: 'read_file', arguments: '{"path":"a.txt"}' },
        { type: 'function_call_output', call_id: 'call_scripted_0', output: 'hi' },
      ],
      tools: [
        { type: 'function', name: 'read_file', description: TOOLS[0]!.description, parameters: TOOLS[0]!.parameters },
      ],
    });
  });

  it('assembles a function call from output_item.added and argument deltas, with text, as the real API streams it', async () => {
    const item = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read_file' };
    const server = await serveFrames([
      typed('response.created', { response: { id: 'resp_1', status: 'in_progress' } }),
      typed('response.output_item.added', { output_index: 0, item: { type: 'message', id: 'msg_1', content: [] } }),
      typed('response.output_text.delta', { item_id: 'msg_1', delta: 'Let me ' }),
      typed('response.output_text.delta', { item_id: 'msg_1', delta: 'look.' }),
      typed('response.output_item.added', { output_index: 1, item: { ...item, arguments: '' } }),
      typed('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 1, delta: '{"path":' }),
      typed('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 1, delta: '"b.txt"}' }),
      typed('response.function_call_arguments.done', {
        item_id: 'fc_1',
        output_index: 1,
        arguments: '{"path":"b.txt"}',
      }),
      typed('response.output_item.done', { output_index: 1, item: { ...item, arguments: '{"path":"b.txt"}' } }),
      typed('response.completed', {
        response: { id: 'resp_1', status: 'completed', usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } },
      }),
    ]);
    assert.deepEqual(await responses(conversation(), modelCall(`${server.url}/v1`)), {
      text: 'Let me look.',
      toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"b.txt"}' }],
      usage: { inputTokens: 3, outputTokens: 2 },
      stopReason: 'completed',
      responseId: 'resp_1',
    });
  });
});

describe('loop wire: Anthropic Messages against the scripted Anthropic model', () => {
  it('reads a tool_use, then text, and threads the tool_result back in a user message', async () => {
    const model = await startAnthropicModel({
      script: [
        {
          type: 'tool',
          name: 'read_file',
          arguments: { path: 'a.txt' },
          usage: { input_tokens: 21, output_tokens: 7 },
        },
        { type: 'message', text: 'It says hi.', usage: { input_tokens: 40, output_tokens: 4 } },
      ],
    });
    closers.push(model.close);
    const first = await anthropicMessages(conversation(), modelCall(model.url));
    assert.deepEqual(first, {
      text: '',
      toolCalls: [{ id: 'toolu_scripted_0', name: 'read_file', arguments: '{"path":"a.txt"}' }],
      usage: { inputTokens: 21, outputTokens: 7 },
      stopReason: 'tool_use',
      responseId: 'msg_scripted_0',
    });

    const second = await anthropicMessages(answered(first, 'hi'), modelCall(model.url));
    assert.deepEqual(second, {
      text: 'It says hi.',
      toolCalls: [],
      usage: { inputTokens: 40, outputTokens: 4 },
      stopReason: 'end_turn',
      responseId: 'msg_scripted_1',
    });

    const request = model.requests[1]!;
    assert.equal(request.path, '/v1/messages');
    assert.equal(request.index, 1, 'the server counted the assistant message');
    assert.deepEqual(request.body, {
      model: 'test-model',
      stream: true,
      max_tokens: 1000,
      system: 'You are a scripted test.',
      messages: [
        { role: 'user', content: 'The compiled Context.' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_scripted_0', name: 'read_file', input: { path: 'a.txt' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_scripted_0', content: 'hi' }] },
      ],
      tools: [{ name: 'read_file', description: TOOLS[0]!.description, input_schema: TOOLS[0]!.parameters }],
    });
  });

  it('puts consecutive tool results in one user message and does not double a /v1 base URL', () => {
    const calls = [
      { id: 'toolu_a', name: 'read_file', arguments: '{"path":"a"}' },
      { id: 'toolu_b', name: 'read_file', arguments: '{"path":"b"}' },
    ];
    const request = anthropicRequest(
      conversation([
        { kind: 'assistant', text: 'Both.', toolCalls: calls },
        { kind: 'tool_result', callId: 'toolu_a', name: 'read_file', output: 'A' },
        { kind: 'tool_result', callId: 'toolu_b', name: 'read_file', output: 'B' },
        { kind: 'user', text: 'Go on.' },
      ]),
      modelCall('https://api.example.test/v1/', { apiKey: 'sk-ant' }),
    );
    assert.equal(request.url, 'https://api.example.test/v1/messages');
    assert.deepEqual(request.headers, { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-ant' });
    assert.deepEqual((request.body as { messages: unknown[] }).messages.slice(1), [
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Both.' },
          { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a' } },
          { type: 'tool_use', id: 'toolu_b', name: 'read_file', input: { path: 'b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'A' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'B' },
        ],
      },
      { role: 'user', content: 'Go on.' },
    ]);
  });

  it("takes a tool_use's input from content_block_start when no input_json_delta came, and skips ping", async () => {
    const server = await serveFrames([
      typed('message_start', { message: { id: 'msg_1', usage: { input_tokens: 9, output_tokens: 1 } } }),
      typed('ping', {}),
      typed('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      typed('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Reading.' } }),
      typed('content_block_stop', { index: 0 }),
      typed('content_block_start', {
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'c.txt' } },
      }),
      typed('content_block_stop', { index: 1 }),
      typed('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 12 } }),
      typed('message_stop', {}),
    ]);
    assert.deepEqual(await anthropicMessages(conversation(), modelCall(server.url)), {
      text: 'Reading.',
      toolCalls: [{ id: 'toolu_1', name: 'read_file', arguments: '{"path":"c.txt"}' }],
      usage: { inputTokens: 9, outputTokens: 12 },
      stopReason: 'tool_use',
      responseId: 'msg_1',
    });
  });
});

describe('loop wire: failures common to the three formats', () => {
  const cases: {
    format: string;
    wire: ModelWire;
    start: (status: number) => Promise<{ url: string; close: () => Promise<void> }>;
  }[] = [
    {
      format: 'chat-completions',
      wire: chatCompletions,
      start: (status) => startChatModel({ script: { turns: [{ httpStatus: status }] } }),
    },
    {
      format: 'responses',
      wire: responses,
      start: (status) => startResponsesModel({ script: [{ type: 'http_error', status, message: 'scripted refusal' }] }),
    },
    {
      format: 'anthropic-messages',
      wire: anthropicMessages,
      start: (status) => startAnthropicModel({ script: [{ type: 'http_error', status, message: 'scripted refusal' }] }),
    },
  ];
  for (const { format, wire, start } of cases) {
    it(`${format}: an HTTP error status rejects model_http_error with the status and the body`, async () => {
      const model = await start(429);
      closers.push(model.close);
      const error = await rejectsWith(wire(conversation(), modelCall(model.url)), 'model_http_error');
      assert.equal(error.status, 429);
      assert.match(error.message, /HTTP 429/);
      assert.match(error.message, /scripted/);
    });
  }

  for (const mode of ['silent', 'headers'] as const) {
    it(`rejects model_first_byte_timeout when the server ${mode === 'silent' ? 'never answers' : 'sends headers but no body'}, and drops the connection`, async () => {
      const server = await holdingServer(mode);
      const call = modelCall(server.url, { firstByteTimeoutMs: 200 });
      const error = await rejectsWith(chatCompletions(conversation(), call), 'model_first_byte_timeout');
      assert.match(error.message, /200 ms/);
      await server.closed;
    });
  }

  it('rejects model_unreachable when nothing listens at the base URL', async () => {
    const server = createServer();
    const port = await listenLoopback(server);
    await new Promise((resolve) => server.close(resolve));
    await rejectsWith(responses(conversation(), modelCall(`http://127.0.0.1:${port}/v1`)), 'model_unreachable');
  });

  const invalid: { format: string; wire: ModelWire; frames: string[]; names: RegExp }[] = [
    {
      format: 'chat-completions',
      wire: chatCompletions,
      frames: [sse({ id: 'c', choices: [{ index: 0, delta: { content: 5 }, finish_reason: null }] })],
      names: /chat\.completion\.chunk: choices\.0\.delta\.content/,
    },
    {
      format: 'chat-completions (not JSON)',
      wire: chatCompletions,
      frames: [sse('{"choices": [')],
      names: /not JSON/,
    },
    {
      format: 'chat-completions (no finish_reason)',
      wire: chatCompletions,
      frames: [sse({ choices: [{ index: 0, delta: { content: 'cut' } }] }), sse('[DONE]')],
      names: /finish_reason/,
    },
    {
      format: 'responses',
      wire: responses,
      frames: [typed('response.output_text.delta', { delta: 7 })],
      names: /response\.output_text\.delta: delta/,
    },
    {
      format: 'responses (response.failed)',
      wire: responses,
      frames: [typed('response.failed', { response: { error: { code: 'server_error', message: 'it broke' } } })],
      names: /server_error: it broke/,
    },
    {
      format: 'responses (stream ends early)',
      wire: responses,
      frames: [typed('response.output_text.delta', { delta: 'half' })],
      names: /ended before response\.completed/,
    },
    {
      format: 'anthropic-messages',
      wire: anthropicMessages,
      frames: [typed('message_start', { message: { id: 'm', usage: { input_tokens: 'many' } } })],
      names: /message_start: message\.usage\.input_tokens/,
    },
    {
      format: 'anthropic-messages (error event)',
      wire: anthropicMessages,
      frames: [typed('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })],
      names: /overloaded_error: Overloaded/,
    },
  ];
  for (const { format, wire, frames, names } of invalid) {
    it(`${format}: a stream that is no valid answer rejects model_answer_invalid naming what is wrong`, async () => {
      const server = await serveFrames(frames);
      const error = await rejectsWith(wire(conversation(), modelCall(`${server.url}/v1`)), 'model_answer_invalid');
      assert.match(error.message, names);
    });
  }

  it('sends the API key as each format expects, to the path each format names', async () => {
    const server = await serveFrames([]);
    for (const wire of [chatCompletions, responses]) {
      await rejection(wire(conversation(), modelCall(`${server.url}/v1/`, { apiKey: 'sk-test' })));
    }
    await rejection(anthropicMessages(conversation(), modelCall(server.url, { apiKey: 'sk-ant' })));
    await rejection(chatCompletions(conversation(), modelCall(`${server.url}/v1`)));
    const [chat, resp, anthropic, keyless] = server.received;
    assert.deepEqual(
      server.received.map((r) => r.path),
      ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/chat/completions'],
    );
    assert.equal(chat?.headers.authorization, 'Bearer sk-test');
    assert.equal(resp?.headers.authorization, 'Bearer sk-test');
    assert.equal(anthropic?.headers['x-api-key'], 'sk-ant');
    assert.equal(anthropic?.headers['anthropic-version'], '2023-06-01');
    assert.equal(anthropic?.headers.authorization, undefined);
    assert.equal(keyless?.headers.authorization, undefined);
  });

  it('wireFor names each format its wire', () => {
    assert.equal(wireFor('chat-completions'), chatCompletions);
    assert.equal(wireFor('responses'), responses);
    assert.equal(wireFor('anthropic-messages'), anthropicMessages);
  });
});

describe('loop wire: Server-Sent Events', () => {
  const text =
    ': a comment\r\nevent: first\r\ndata: {"x":"é😀"}\r\n\r\n' +
    'data: line 1\ndata: line 2\nid: 3\nretry: 10\n\n' +
    'data:no space\r\r' +
    ': only a comment\n\n' +
    'event: empty-is-dropped\n\n' +
    'data: [DONE]\n\n' +
    'data: tail without a blank line';
  const expected: SseFrame[] = [
    { event: 'first', data: '{"x":"é😀"}' },
    { data: 'line 1\nline 2' },
    { data: 'no space' },
    { data: '[DONE]' },
    { data: 'tail without a blank line' },
  ];
  const bytes = new TextEncoder().encode(text);

  async function read(chunks: Uint8Array[]): Promise<SseFrame[]> {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    const frames: SseFrame[] = [];
    for await (const frame of sseFrames(body)) frames.push(frame);
    return frames;
  }

  it('reads the same frames however the bytes are split into chunks (CRLF, CR, comments, split UTF-8)', async () => {
    assert.deepEqual(await read([bytes]), expected);
    for (let at = 1; at < bytes.length; at++) {
      assert.deepEqual(await read([bytes.slice(0, at), bytes.slice(at)]), expected, `split at byte ${at}`);
    }
    assert.deepEqual(await read([...bytes].map((b) => Uint8Array.of(b))), expected, 'one byte a chunk');
  });

  it('cancels the body when the reader stops early', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: one\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const frame of sseFrames(body)) {
      assert.deepEqual(frame, { data: 'one' });
      break;
    }
    assert.equal(cancelled, true);
  });
});
