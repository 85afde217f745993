import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startChatModel, type ChatModel, type ChatModelScriptIn } from '../../workloads/scripted/chat-model.js';

// The SCRIPTED loopback chat-completions model that stands in for the LLM behind real agents.

let model: ChatModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const TOOLS = [{ type: 'function', function: { name: 'write', parameters: { type: 'object' } } }];

async function start(script: ChatModelScriptIn): Promise<ChatModel> {
  model = await startChatModel({ script });
  return model;
}

function post(m: ChatModel, body: unknown): Promise<Response> {
  return fetch(`${m.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Parses an SSE body into its `data:` payloads. */
async function frames(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((f) => f.startsWith('data: '))
    .map((f) => f.slice('data: '.length))
    .map((d) => (d === '[DONE]' ? '[DONE]' : JSON.parse(d)));
}

type Chunk = {
  model: string;
  choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }>;
  usage?: unknown;
};

describe('scripted chat-completions model', () => {
  it('streams the title for a tool-less request and the next scripted turn (reasoning, tool call, usage) for a tool-offering one', async () => {
    const m = await start({
      title: 'A title',
      turns: [
        {
          reasoning: 'thinking',
          toolCalls: [{ id: 'call_x', name: 'write', arguments: { filePath: '/w/a.txt', content: 'hi' } }],
          usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
        },
      ],
    });
    const title = (await frames(
      await post(m, { model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    )) as Array<Chunk | '[DONE]'>;
    assert.equal(title.at(-1), '[DONE]');
    const titleChunks = title.filter((f): f is Chunk => f !== '[DONE]');
    assert.equal(titleChunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'A title');
    assert.equal(titleChunks[0]!.model, 'm (scripted)');

    const turn = (await frames(await post(m, { model: 'm', stream: true, tools: TOOLS, messages: [] }))).filter(
      (f): f is Chunk => f !== '[DONE]',
    );
    const deltas = turn.flatMap((c) => c.choices.map((ch) => ch.delta));
    assert.equal(deltas.find((d) => d.reasoning_content)?.reasoning_content, 'thinking');
    const calls = deltas.flatMap(
      (d) => (d.tool_calls as Array<{ id?: string; function: { name?: string; arguments: string } }> | undefined) ?? [],
    );
    assert.equal(calls[0]!.id, 'call_x');
    assert.equal(calls[0]!.function.name, 'write');
    assert.deepEqual(JSON.parse(calls.map((c) => c.function.arguments).join('')), {
      filePath: '/w/a.txt',
      content: 'hi',
    });
    assert.equal(turn.flatMap((c) => c.choices).find((ch) => ch.finish_reason)?.finish_reason, 'tool_calls');
    assert.deepEqual(turn.at(-1)!.usage, { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    assert.deepEqual(
      m.requests.map((r) => [r.kind, r.turn]),
      [
        ['title', undefined],
        ['turn', 0],
      ],
    );
  });

  it('answers a non-streaming request with a chat.completion carrying the tool calls', async () => {
    const m = await start({ turns: [{ toolCalls: [{ name: 'write', arguments: '{"a":1}' }] }] });
    const body = (await (await post(m, { messages: [], tools: TOOLS })).json()) as {
      system_fingerprint: string;
      choices: Array<{
        message: { tool_calls: Array<{ function: { name: string; arguments: string } }> };
        finish_reason: string;
      }>;
    };
    assert.equal(body.system_fingerprint, 'scripted');
    assert.equal(body.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(body.choices[0]!.message.tool_calls[0]!.function, { name: 'write', arguments: '{"a":1}' });
  });

  it('fails loudly: scripted HTTP errors, script_exhausted after the last turn, invalid_request naming the field', async () => {
    const m = await start({ turns: [{ httpStatus: 500 }] });
    assert.equal((await post(m, { messages: [], tools: TOOLS })).status, 500);
    const exhausted = await post(m, { messages: [], tools: TOOLS });
    assert.equal(exhausted.status, 400);
    assert.equal(((await exhausted.json()) as { error: { code: string } }).error.code, 'script_exhausted');
    const invalid = await post(m, { messages: 'not an array' });
    assert.equal(invalid.status, 400);
    assert.deepEqual(
      ((await invalid.json()) as { error: { code: string; param: string } }).error.code,
      'invalid_request',
    );
    await assert.rejects(startChatModel({ script: { turns: [{ httpStatus: 200 }] } }), /httpStatus|Too small/);
  });

  it('keeps a hanging stream open until close() drops it', async () => {
    const m = await start({ turns: [{ hang: true }] });
    const response = await post(m, { stream: true, messages: [], tools: TOOLS });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /^data: .*"role":"assistant"/);
    const rest = reader.read().then(
      (r) => (r.done ? 'ended' : 'more'),
      () => 'dropped',
    );
    await m.close();
    model = undefined;
    assert.notEqual(await rest, 'more');
  });
});
