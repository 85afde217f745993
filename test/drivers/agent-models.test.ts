import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startAnthropicModel } from '../../workloads/scripted/anthropic-model.js';
import { startGeminiModel } from '../../workloads/scripted/gemini-model.js';
import type { ScriptedModel } from '../../workloads/scripted/responses-model.js';
import { assertHeldUntilClose } from '../support/scripted-hang.js';

// The SCRIPTED loopback Gemini and Anthropic models on their own, spoken to over real HTTP the way
// gemini-cli and the Claude adapters speak to them.

async function started(t: TestContext, model: Promise<ScriptedModel>): Promise<ScriptedModel> {
  const m = await model;
  t.after(() => m.close());
  return m;
}

async function post(url: string, body: unknown): Promise<{ status: number; text: string; json: any }> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

/** The JSON payloads of an SSE body, with their `event:` names when present. */
function sse(text: string): { event?: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.includes('data: '))
    .map((frame) => {
      const event = /^event: (.+)$/m.exec(frame)?.[1];
      const data = JSON.parse(/^data: (.+)$/m.exec(frame)![1]!);
      return event === undefined ? { data } : { event, data };
    });
}

const geminiTools = [{ functionDeclarations: [{ name: 'run_shell_command' }, { name: 'write_file' }] }];
const geminiUser = { role: 'user', parts: [{ text: 'go' }] };

describe('scripted Gemini model', () => {
  it('streams the step chosen by the model turns in the body: a functionCall, then text, with usageMetadata', async (t) => {
    const m = await started(
      t,
      startGeminiModel({
        script: [
          { type: 'shell', command: ['printf', '%s', 'a b'], usage: { input_tokens: 7, output_tokens: 3 } },
          { type: 'message', text: 'done' },
        ],
      }),
    );
    assert.match(m.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const url = `${m.url}/v1beta/models/gemini-x:streamGenerateContent?alt=sse`;
    const first = sse((await post(url, { contents: [geminiUser], tools: geminiTools })).text);
    assert.deepEqual(first[0]!.data.candidates[0].content.parts, [
      { functionCall: { name: 'run_shell_command', args: { command: "printf %s 'a b'" } } },
    ]);
    assert.deepEqual(first[0]!.data.usageMetadata, {
      promptTokenCount: 7,
      candidatesTokenCount: 3,
      cachedContentTokenCount: 0,
      thoughtsTokenCount: 0,
      totalTokenCount: 10,
    });
    const history = [
      geminiUser,
      {
        role: 'model',
        parts: [{ text: 'hmm', thought: true }, { functionCall: { name: 'run_shell_command', args: {} } }],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { id: 'c1', name: 'run_shell_command', response: { output: 'Exit Code: 3' } } }],
      },
    ];
    const second = sse((await post(url, { contents: history, tools: geminiTools })).text);
    assert.deepEqual(second[0]!.data.candidates[0].content.parts, [{ text: 'done' }]);
    assert.deepEqual(
      m.requests.map((r) => [r.index, r.answeredWith, r.model, r.tools]),
      [
        [0, 'shell', 'gemini-x', ['run_shell_command', 'write_file']],
        [1, 'message', 'gemini-x', ['run_shell_command', 'write_file']],
      ],
    );
    assert.deepEqual(m.requests[1]!.toolOutputs, [{ callId: 'c1', output: 'Exit Code: 3', exitCode: 3 }]);
  });

  it('answers JSON-mode generateContent (router, next speaker) with the classifier JSON, consuming no step; countTokens with a count', async (t) => {
    const m = await started(t, startGeminiModel({ script: [{ type: 'message', text: 'step 0' }] }));
    const classified = await post(`${m.url}/v1beta/models/lite:generateContent`, {
      contents: [geminiUser],
      generationConfig: { responseMimeType: 'application/json' },
    });
    const answer = JSON.parse(classified.json.candidates[0].content.parts[0].text);
    assert.equal(answer.next_speaker, 'user');
    assert.equal(answer.model_choice, 'flash');
    const plain = await post(`${m.url}/v1beta/models/x:generateContent`, { contents: [geminiUser] });
    assert.deepEqual(plain.json.candidates[0].content.parts, [{ text: 'step 0' }]);
    assert.equal((await post(`${m.url}/v1beta/models/x:countTokens`, {})).json.totalTokens, 100);
    assert.deepEqual(
      m.requests.map((r) => [r.index, r.answeredWith]),
      [
        [-1, 'side'],
        [0, 'message'],
        [-1, 'count_tokens'],
      ],
    );
  });

  it('is loud: scripted HTTP errors in the Google shape, an exhausted script labelled, unknown routes and bodies recorded, Codex-only shell fields a 500', async (t) => {
    const m = await started(
      t,
      startGeminiModel({ script: [{ type: 'http_error', status: 429, message: 'slow down' }] }),
    );
    const url = `${m.url}/v1beta/models/x:streamGenerateContent`;
    const failed = await post(url, { contents: [geminiUser] });
    assert.deepEqual([failed.status, failed.json.error.code, failed.json.error.message], [429, 429, 'slow down']);
    const after = await post(url, { contents: [geminiUser, { role: 'model', parts: [{ text: 'x' }] }] });
    assert.match(sse(after.text)[0]!.data.candidates[0].content.parts[0].text, /script exhausted/);
    assert.equal((await post(`${m.url}/v1/other`, {})).status, 404);
    assert.equal((await post(url, { contents: 'no' })).status, 400);
    assert.deepEqual(
      m.requests.map((r) => [r.answeredWith, r.exhausted ?? false]),
      [
        ['http_error', false],
        ['message', true],
        ['not_found', false],
        ['bad_request', false],
      ],
    );
    const codexOnly = await started(
      t,
      startGeminiModel({ script: [{ type: 'shell', command: 'ls', workdir: '/tmp' }] }),
    );
    const refused = await post(`${codexOnly.url}/v1beta/models/x:streamGenerateContent`, { contents: [geminiUser] });
    assert.equal(refused.status, 500);
    assert.match(refused.json.error.message, /workdir/);
  });
});

const anthropicTools = [{ name: 'Bash' }, { name: 'Write' }];
const anthropicUser = { role: 'user', content: 'go' };

describe('scripted Anthropic model', () => {
  it('streams a tool_use for the first step and text once a tool_result is in the conversation, with usage', async (t) => {
    const m = await started(
      t,
      startAnthropicModel({
        script: [
          { type: 'tool', name: 'Write', arguments: { file_path: '/w/a.json', content: '{}' } },
          { type: 'message', text: 'done', usage: { input_tokens: 9, output_tokens: 4, cached_tokens: 2 } },
        ],
      }),
    );
    const url = `${m.url}/v1/messages?beta=true`;
    const first = sse(
      (await post(url, { model: 'c', stream: true, messages: [anthropicUser], tools: anthropicTools })).text,
    );
    assert.deepEqual(
      first.map((f) => f.event),
      [
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ],
    );
    assert.deepEqual(first[1]!.data.content_block, {
      type: 'tool_use',
      id: 'toolu_scripted_0',
      name: 'Write',
      input: {},
    });
    assert.deepEqual(JSON.parse(first[2]!.data.delta.partial_json), { file_path: '/w/a.json', content: '{}' });
    assert.equal(first[4]!.data.delta.stop_reason, 'tool_use');
    const history = [
      anthropicUser,
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_scripted_0', name: 'Write', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_scripted_0', content: [{ type: 'text', text: 'Exit code 2' }] },
        ],
      },
    ];
    const second = await post(url, { model: 'c', messages: history, tools: anthropicTools });
    assert.deepEqual(second.json.content, [{ type: 'text', text: 'done' }]);
    assert.deepEqual(second.json.usage, {
      input_tokens: 9,
      output_tokens: 4,
      cache_read_input_tokens: 2,
      cache_creation_input_tokens: 0,
    });
    assert.deepEqual(m.requests[1]!.toolOutputs, [{ callId: 'toolu_scripted_0', output: 'Exit code 2', exitCode: 2 }]);
  });

  it('answers tool-less requests (titles, classifiers) and count_tokens without consuming a step; a shell step is a Bash call', async (t) => {
    const m = await started(
      t,
      startAnthropicModel({ script: [{ type: 'shell', command: 'true' }], sideText: 'A title' }),
    );
    const title = await post(`${m.url}/v1/messages`, { model: 'h', messages: [anthropicUser] });
    assert.deepEqual(title.json.content, [{ type: 'text', text: 'A title' }]);
    assert.equal((await post(`${m.url}/v1/messages/count_tokens`, { messages: [] })).json.input_tokens, 100);
    const turn = await post(`${m.url}/v1/messages`, { model: 'c', messages: [anthropicUser], tools: anthropicTools });
    assert.deepEqual(turn.json.content[0].name, 'Bash');
    assert.deepEqual(turn.json.content[0].input, { command: 'true', description: 'Run a command' });
    assert.deepEqual(
      m.requests.map((r) => [r.index, r.answeredWith]),
      [
        [-1, 'side'],
        [-1, 'count_tokens'],
        [0, 'shell'],
      ],
    );
  });

  it('holds a hang step open until close() ends it', async (t) => {
    const m = await startAnthropicModel({ script: [{ type: 'hang' }] });
    t.after(() => m.close());
    const body = JSON.stringify({ stream: true, messages: [anthropicUser], tools: anthropicTools });
    await assertHeldUntilClose(m, fetch(`${m.url}/v1/messages`, { method: 'POST', body }));
  });
});
