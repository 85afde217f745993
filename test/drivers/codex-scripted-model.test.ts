import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { startResponsesModel } from '../../workloads/scripted/responses-model.js';
import { ResponsesStep, type ScriptEntry } from '../../workloads/scripted/responses-script.js';
import { shellJoin } from '../../workloads/scripted/responses-sse.js';
import { assertHeldUntilClose } from '../support/scripted-hang.js';

// The SCRIPTED loopback model on its own, spoken to over real HTTP the way codex speaks to it.

async function model(t: TestContext, script: ScriptEntry[]) {
  const m = await startResponsesModel({ script });
  t.after(() => m.close());
  return m;
}

async function post(
  url: string,
  body: unknown,
): Promise<{ status: number; headers: Headers; events: { event: string; data: any }[]; text: string }> {
  const response = await fetch(`${url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const events = text
    .split('\n\n')
    .filter((frame) => frame.startsWith('event: '))
    .map((frame) => {
      const [eventLine, dataLine] = frame.split('\n');
      return { event: eventLine!.slice('event: '.length), data: JSON.parse(dataLine!.slice('data: '.length)) };
    });
  return { status: response.status, headers: response.headers, events, text };
}

const user = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] };
const call = (n: number) => ({
  type: 'function_call',
  name: 'exec_command',
  arguments: '{}',
  call_id: `call_scripted_${n}`,
});
const output = (n: number, code: number, text: string) => ({
  type: 'function_call_output',
  call_id: `call_scripted_${n}`,
  output: `Chunk ID: x\nWall time: 0.0000 seconds\nProcess exited with code ${code}\nOutput:\n${text}`,
});

describe('scripted Responses model', () => {
  it('answers the first request with the first step as an exec_command function call', async (t) => {
    const m = await model(t, [
      { type: 'shell', command: ['printf', '%s', "it's"], usage: { input_tokens: 7, output_tokens: 3 } },
    ]);
    assert.match(m.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const reply = await post(m.url, { model: 'x', input: [user] });
    assert.equal(reply.status, 200);
    assert.equal(reply.headers.get('x-ordivon-scripted'), 'true');
    assert.deepEqual(
      reply.events.map((e) => e.event),
      ['response.created', 'response.output_item.done', 'response.completed'],
    );
    const item = reply.events[1]!.data.item;
    assert.equal(item.call_id, 'call_scripted_0');
    assert.deepEqual(JSON.parse(item.arguments), { cmd: `printf %s 'it'\\''s'` });
    assert.deepEqual(reply.events[2]!.data.response.usage, {
      input_tokens: 7,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 10,
    });
  });

  it('selects the step from the conversation in the body, not from the request count', async (t) => {
    const m = await model(t, [
      { type: 'shell', command: 'true' },
      { type: 'message', text: 'second' },
    ]);
    const toolOutput = output(0, 0, '');
    const body = { input: [user, call(0), toolOutput] };
    const first = await post(m.url, body);
    const again = await post(m.url, body);
    assert.equal(first.text, again.text, 'same body, byte-identical stream');
    assert.deepEqual(
      first.events.map((e) => e.event),
      [
        'response.created',
        'response.output_item.added',
        'response.output_text.delta',
        'response.output_item.done',
        'response.completed',
      ],
    );
    assert.deepEqual(first.events[3]!.data.item.content, [{ type: 'output_text', text: 'second' }]);
    assert.deepEqual(
      m.requests.map((r) => [r.seq, r.index, r.answeredWith]),
      [
        [0, 1, 'message'],
        [1, 1, 'message'],
      ],
    );
    assert.deepEqual(m.requests[0]!.toolOutputs, [
      { callId: 'call_scripted_0', output: toolOutput.output, exitCode: 0 },
    ]);
  });

  it('chooses the next step from the previous tool output (data-only diagnose/repair)', async (t) => {
    const step: ResponsesStep = {
      type: 'choose',
      cases: [
        { when: { exitCode: 0 }, step: { type: 'message', text: 'tests pass' } },
        { when: { outputIncludes: 'AssertionError' }, step: { type: 'shell', command: 'apply-fix' } },
      ],
      otherwise: { type: 'message', text: 'cannot tell' },
    };
    const m = await model(t, [{ type: 'shell', command: 'run-tests' }, step]);
    const texts = async (code: number, out: string) =>
      (await post(m.url, { input: [user, call(0), output(0, code, out)] })).events;
    assert.equal((await texts(0, 'ok'))[3]!.data.item.content[0].text, 'tests pass');
    assert.equal(JSON.parse((await texts(1, 'AssertionError: 1 !== 2'))[1]!.data.item.arguments).cmd, 'apply-fix');
    assert.equal((await texts(2, 'segfault'))[3]!.data.item.content[0].text, 'cannot tell');
    assert.ok(ResponsesStep.safeParse(step).success, 'the script is plain data');
  });

  it('lets a function choose the step', async (t) => {
    const m = await model(t, [
      (ctx) => ({ type: 'message', text: `saw ${ctx.index} outputs, last exit ${ctx.lastToolOutput?.exitCode}` }),
    ]);
    const reply = await post(m.url, { input: [user] });
    assert.equal(reply.events[3]!.data.item.content[0].text, 'saw 0 outputs, last exit undefined');
  });

  it('answers an http_error step with that status, and an exhausted script with a labelled message', async (t) => {
    const m = await model(t, [{ type: 'http_error', status: 429, message: 'slow down' }]);
    const failed = await post(m.url, { input: [user] });
    assert.equal(failed.status, 429);
    assert.deepEqual(JSON.parse(failed.text).error.message, 'slow down');
    const exhausted = await post(m.url, { input: [user, call(0), output(0, 0, '')] });
    assert.equal(exhausted.events[3]!.data.item.content[0].text, 'scripted model: script exhausted');
  });

  it('refuses what is not a Responses request', async (t) => {
    const m = await model(t, []);
    assert.equal((await fetch(`${m.url}/models`)).status, 404);
    assert.equal((await post(m.url, { input: 'not a list' })).status, 400);
    assert.equal(m.requests.at(-1)?.answeredWith, 'bad_request');
  });

  it('holds a hang step open until close() ends it', async (t) => {
    const m = await model(t, [{ type: 'hang' }]);
    const body = JSON.stringify({ input: [user] });
    await assertHeldUntilClose(m, fetch(`${m.url}/responses`, { method: 'POST', body }));
  });

  it('shell-quotes argv items', () => {
    assert.equal(shellJoin(['sh', '-c', 'echo "$X" > a b']), `sh -c 'echo "$X" > a b'`);
    assert.equal(shellJoin(['printf', '%s\\n', '']), `printf '%s\\n' ''`);
  });
});
