import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COMPACT_TO, planCompaction, sentItems, type History } from '../../drivers/loop/compaction.js';
import type { ConversationItem, WireFormat } from '../../drivers/loop/conversation.js';
import { runLoopDriver, LOOP_SYSTEM } from '../../drivers/loop/index.js';
import { readLogFile, StepLog, type LogRecord, type NewRecord } from '../../drivers/loop/step-log.js';
import { LOOP_TOOLS } from '../../drivers/loop/tools.js';
import { requestFor } from '../../drivers/loop/wire/index.js';
import { DriverResult, DriverRunInput, type DriverRunInputIn } from '../../drivers/receipt.js';
import { startAnthropicModel } from '../../workloads/scripted/anthropic-model.js';
import { startChatModel, type ChatReply } from '../../workloads/scripted/chat-model.js';
import { startResponsesModel } from '../../workloads/scripted/responses-model.js';
import type { ResponsesStep } from '../../workloads/scripted/responses-script.js';
import { tempDir } from '../support/temp.js';

// Loop v0's bounded history (drivers/loop/compaction.ts), end to end: a real loop reading real
// files through its tools against the scripted loopback models, with a bound smaller than a few
// of its tool outputs. The bound is on the request body as JSON, measured as the wire builds it,
// so the stated slack is none: every request the model receives is within the bound.

const here = dirname(fileURLToPath(import.meta.url));
const CHILD = join(here, '..', 'fixtures', 'loop', 'loop-child.js');
const SEED = join(here, '..', '..', '..', 'workloads', 'duration-v1', 'repo');
const FORMATS = ['chat-completions', 'responses', 'anthropic-messages'] as const;
const PROMPT = 'Stage: investigate\nRead the big files, then finish.';

/** A file of 60 lines of 95 characters: its read_file output (about 5.9 KB) is kept by digest in the log's blobs/. */
const bigFile = (n: number): string =>
  Array.from({ length: 60 }, (_, line) => `file ${n} line ${line} `.padEnd(95, String.fromCharCode(97 + n))).join('\n');

type Call = { name: string; arguments: Record<string, unknown> };
/** `reads` read_file calls, one big file each, then finish. */
const script = (reads: number): Call[] => [
  ...Array.from({ length: reads }, (_, i) => ({ name: 'read_file', arguments: { path: `big-${i + 1}.txt` } })),
  { name: 'finish', arguments: { summary: 'read them all' } },
];

function place(reads: number): { ws: string; logDir: string } {
  const dir = tempDir('ordivon-loop-compact-');
  const ws = join(dir, 'ws');
  cpSync(SEED, ws, { recursive: true });
  for (let n = 1; n <= reads; n++) writeFileSync(join(ws, `big-${n}.txt`), bigFile(n));
  return { ws, logDir: join(dir, 'loops', 'attempt-1') };
}

function loopInput(
  ws: string,
  logDir: string,
  format: WireFormat,
  baseUrl: string,
  historyChars: number,
  generation = 1,
): DriverRunInputIn {
  return {
    driver: 'loop',
    runId: `task-1/a1/g${generation}/run`,
    command: 'ordivon-loop',
    cwd: ws,
    prompt: PROMPT,
    contextDigest: 'sha256:' + 'c'.repeat(64),
    model: 'scripted-model',
    timeoutMs: 120_000,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    expectedArtifacts: [],
    loop: { format, baseUrl, logDir, generation, conversation: 'investigate', maxTurns: 20, historyChars },
  };
}

/** The scripted model of `format` playing `calls`, with the request bodies it received. */
async function scriptedModel(format: WireFormat, calls: readonly Call[]) {
  const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
  const steps: ResponsesStep[] = calls.map((call) => ({ type: 'tool', ...call }));
  const server =
    format === 'chat-completions'
      ? await startChatModel({
          script: { turns: calls.map((call): ChatReply => ({ toolCalls: [call], usage, hang: false })) },
        })
      : format === 'responses'
        ? await startResponsesModel({ script: steps })
        : await startAnthropicModel({ script: steps });
  return {
    url: server.url,
    bodies: () => server.requests.map((r) => r.body as Record<string, unknown>),
    close: () => server.close(),
  };
}

/** Runs one loop run in a child process (test/fixtures/loop/loop-child.ts); undefined when it was killed. */
async function runChild(
  input: DriverRunInputIn,
  killAfter?: { record: NewRecord['t']; nth: number },
): Promise<DriverResult | undefined> {
  const dir = tempDir('ordivon-loop-child-');
  const inFile = join(dir, 'in.json');
  const outFile = join(dir, 'out.json');
  writeFileSync(inFile, JSON.stringify({ input, ...(killAfter ? { killAfter } : {}) }));
  const child = spawn(process.execPath, [CHILD, inFile, outFile], { stdio: ['ignore', 'inherit', 'inherit'] });
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  if (signal === 'SIGKILL') return undefined;
  assert.equal(code, 0, 'the loop child exited cleanly');
  return DriverResult.parse(JSON.parse(readFileSync(outFile, 'utf8')));
}

/** The system prompt and the first message of a request body, as that format carries them. */
function head(format: WireFormat, body: Record<string, unknown>): { system: unknown; first: unknown } {
  const list = (key: string) => body[key] as unknown[];
  if (format === 'chat-completions') return { system: list('messages')[0], first: list('messages')[1] };
  if (format === 'responses') return { system: body['instructions'], first: list('input')[0] };
  return { system: body['system'], first: list('messages')[0] };
}

type Json = Record<string, unknown>;

/**
 * What breaks the tool call ↔ result pairing of a request body, as its API checks it: every call
 * answered, once, by a result right after it (Anthropic: in the next user message), and no result
 * without its call. Empty when the body is valid.
 */
function pairingProblems(format: WireFormat, body: Json): string[] {
  const problems: string[] = [];
  if (format === 'chat-completions') {
    const messages = body['messages'] as Json[];
    let open: string[] = [];
    for (const [i, m] of messages.entries()) {
      if (m['role'] === 'tool') {
        const id = m['tool_call_id'] as string;
        if (!open.includes(id)) problems.push(`messages.${i}: tool result ${id} answers no open call`);
        open = open.filter((o) => o !== id);
        continue;
      }
      if (open.length > 0) problems.push(`messages.${i}: calls ${open.join(', ')} have no result`);
      open = ((m['tool_calls'] as Json[] | undefined) ?? []).map((c) => c['id'] as string);
    }
    if (open.length > 0) problems.push(`calls ${open.join(', ')} have no result`);
  } else if (format === 'responses') {
    const input = body['input'] as Json[];
    const calls = input.filter((x) => x['type'] === 'function_call').map((x) => x['call_id'] as string);
    const outputs = input.filter((x) => x['type'] === 'function_call_output').map((x) => x['call_id'] as string);
    if (new Set(calls).size !== calls.length) problems.push(`a call id is used twice: ${calls.join(', ')}`);
    for (const [i, x] of input.entries()) {
      if (x['type'] !== 'function_call_output') continue;
      const id = x['call_id'] as string;
      const call = input.findIndex((c) => c['type'] === 'function_call' && c['call_id'] === id);
      if (call < 0 || call > i) problems.push(`input.${i}: output ${id} follows no call of its id`);
    }
    for (const id of calls) if (!outputs.includes(id)) problems.push(`call ${id} has no output`);
    if (outputs.length !== calls.length) problems.push(`${calls.length} calls and ${outputs.length} outputs`);
  } else {
    const messages = body['messages'] as Json[];
    if (messages[0]?.['role'] !== 'user') problems.push('the first message is not the user’s');
    const blocks = (m: Json | undefined, type: string): Json[] =>
      Array.isArray(m?.['content']) ? (m['content'] as Json[]).filter((b) => b['type'] === type) : [];
    for (const [i, m] of messages.entries()) {
      const uses = blocks(m, 'tool_use').map((b) => b['id'] as string);
      const results = blocks(messages[i + 1], 'tool_result').map((b) => b['tool_use_id'] as string);
      if (m['role'] === 'assistant' && JSON.stringify(uses) !== JSON.stringify(results))
        problems.push(`messages.${i}: tool_use ${uses.join(', ')} answered by ${results.join(', ') || 'nothing'}`);
      const before = blocks(messages[i - 1], 'tool_use').map((b) => b['id'] as string);
      for (const block of blocks(m, 'tool_result'))
        if (!before.includes(block['tool_use_id'] as string))
          problems.push(`messages.${i}: tool_result ${String(block['tool_use_id'])} answers no tool_use before it`);
    }
  }
  return problems;
}

const compactions = (logFile: string) =>
  readLogFile(logFile).filter((r): r is Extract<LogRecord, { t: 'compact' }> => r.t === 'compact');
const withoutTime = ({ at: _at, ...rest }: LogRecord) => rest;

/** What every request of a run must show, and the log must say, with the history bounded by `bound`. */
function assertBounded(format: WireFormat, bodies: Json[], logFile: string, bound: number): void {
  assert.ok(bodies.length > 0);
  const { system, first } = head(format, bodies[0]!);
  assert.match(JSON.stringify(first), /Read the big files, then finish/);
  for (const [i, body] of bodies.entries()) {
    const chars = JSON.stringify(body).length;
    assert.ok(chars <= bound, `request ${i} is ${chars} characters, over the bound of ${bound}`);
    assert.deepEqual(head(format, body), { system, first }, `request ${i} keeps the system prompt and first message`);
    assert.deepEqual(pairingProblems(format, body), [], `request ${i} pairs each tool call with its result`);
  }
  const records = readLogFile(logFile);
  const compacts = records.filter((r): r is Extract<LogRecord, { t: 'compact' }> => r.t === 'compact');
  assert.ok(compacts.length > 0, 'the log records a compaction');
  let omittedItems = 0;
  for (const compact of compacts) {
    omittedItems = compact.omitted?.items ?? omittedItems;
    // Recorded before the request it shaped, and saying truly how long that request was.
    const index = records.indexOf(compact);
    assert.deepEqual(records[index + 1], { t: 'model_request', turn: compact.turn, at: records[index + 1]!.at });
    assert.equal(compact.charsAfter, JSON.stringify(bodies[compact.turn]).length);
    assert.ok(compact.charsBefore > bound && compact.charsAfter <= compact.charsBefore);
    for (const stub of compact.stubbed) {
      // The claim check: the output is kept once in blobs/ under the digest the stub names.
      const blob = join(dirname(logFile), 'blobs', stub.digest.slice('sha256:'.length));
      assert.ok(existsSync(blob), `${stub.digest} is in blobs/`);
      const kept = readFileSync(blob, 'utf8');
      assert.equal('sha256:' + createHash('sha256').update(kept).digest('hex'), stub.digest);
      assert.equal(kept.length, stub.outputChars);
      // A stub of a turn that this compaction also left out is not sent.
      if (stub.item > omittedItems)
        assert.ok(
          JSON.stringify(bodies[compact.turn]).includes(stub.digest),
          `request ${compact.turn} names ${stub.digest}`,
        );
    }
  }
}

describe('Loop v0 bounded history (historyChars)', { timeout: 120_000 }, () => {
  for (const format of FORMATS) {
    it(`against ${format}, every request stays within the bound: old outputs become stubs naming their digests`, async (t) => {
      const reads = 5;
      const bound = 20_000;
      const model = await scriptedModel(format, script(reads));
      t.after(() => model.close());
      const { ws, logDir } = place(reads);
      const result = await runLoopDriver(
        DriverRunInput.parse(loopInput(ws, logDir, format, model.url, bound)),
        new AbortController().signal,
      );
      assert.ok(result.ok, JSON.stringify(result));
      const bodies = model.bodies();
      assert.equal(bodies.length, reads + 1);
      const logFile = join(logDir, 'g1.jsonl');
      assertBounded(format, bodies, logFile, bound);
      // Without compaction the last request would carry all five outputs: more than the bound.
      assert.ok(compactions(logFile).every((c) => c.omitted === undefined && c.stubbed.length > 0));
      const stubbed = compactions(logFile).flatMap((c) => c.stubbed.map((s) => s.name));
      assert.deepEqual(stubbed, ['read_file', 'read_file', 'read_file', 'read_file']);
      // The latest result the model is asked about is whole.
      assert.match(JSON.stringify(bodies.at(-1)), /file 5 line 59 /);
      assert.doesNotMatch(JSON.stringify(bodies.at(-1)), /file 1 line 59 /);
      const usage = result.receipt.usage as Record<string, number>;
      assert.equal(usage['compactions'], compactions(logFile).length);
    });
  }

  it('with a bound stubs cannot meet, the oldest whole turns are left out and one note says how many', async (t) => {
    const reads = 6;
    const bound = 14_000;
    const model = await scriptedModel('chat-completions', script(reads));
    t.after(() => model.close());
    const { ws, logDir } = place(reads);
    const result = await runLoopDriver(
      DriverRunInput.parse(loopInput(ws, logDir, 'chat-completions', model.url, bound)),
      new AbortController().signal,
    );
    assert.ok(result.ok, JSON.stringify(result));
    const bodies = model.bodies();
    assert.equal(bodies.length, reads + 1, 'each turn asked once');
    const logFile = join(logDir, 'g1.jsonl');
    assertBounded('chat-completions', bodies, logFile, bound);
    const omitted = compactions(logFile).flatMap((c) => (c.omitted ? [c.omitted] : []));
    assert.ok(omitted.length > 0, 'turns were left out');
    const last = omitted.at(-1)!;
    const messages = bodies.at(-1)!['messages'] as Json[];
    // The system prompt, the Context, the note in place of what is left out, then the turns kept.
    assert.deepEqual(messages[2], { role: 'user', content: last.note });
    assert.match(last.note, new RegExp(`^\\[Compacted: ${last.items} earlier messages \\(${last.turns} of your turns`));
    assert.equal(messages.filter((m) => m['role'] === 'user').length, 2, 'one note, however many compactions');
  });

  /** Where a run is killed, and the history it had: old outputs stubbed (5 reads, 20 000) or turns left out (6, 14 000). */
  const RESUMES = [
    ...FORMATS.map((format) => ({
      format,
      when: 'after recording a compaction, before its request',
      killAfter: { record: 'compact' as const, nth: 1 },
      reads: 5,
      bound: 20_000,
    })),
    {
      format: 'chat-completions',
      when: 'after the answer to a compacted request',
      killAfter: { record: 'model_response', nth: 4 },
      reads: 5,
      bound: 20_000,
    },
    {
      format: 'chat-completions',
      when: 'after recording its second compaction that left turns out',
      killAfter: { record: 'compact', nth: 2 },
      reads: 6,
      bound: 14_000,
    },
  ] as const;
  for (const { format, when, killAfter, reads, bound } of RESUMES) {
    it(`against ${format}, killed ${when}, the next generation sends the same compacted requests and asks no answered turn again`, async (t) => {
      const reference = await scriptedModel(format, script(reads));
      t.after(() => reference.close());
      const straight = place(reads);
      const whole = await runChild(loopInput(straight.ws, straight.logDir, format, reference.url, bound));
      assert.ok(whole?.ok, JSON.stringify(whole));

      const model = await scriptedModel(format, script(reads));
      t.after(() => model.close());
      const { ws, logDir } = place(reads);
      assert.equal(await runChild(loopInput(ws, logDir, format, model.url, bound), killAfter), undefined);
      const killed = readLogFile(join(logDir, 'g1.jsonl'));
      assert.ok(
        killed.some((r) => r.t === 'compact'),
        'the killed run had compacted its history',
      );
      const answered = killed.filter((r) => r.t === 'model_response').length;
      const result = await runChild(loopInput(ws, logDir, format, model.url, bound, 2));
      assert.ok(result?.ok, JSON.stringify(result));
      // Request by request, the same bodies as the run that was never stopped: none asked twice.
      assert.deepEqual(model.bodies(), reference.bodies());
      // The compactions were replayed as recorded, not decided again.
      assert.deepEqual(
        compactions(join(logDir, 'g2.jsonl')).map(withoutTime),
        compactions(join(straight.logDir, 'g1.jsonl')).map(withoutTime),
      );
      assertBounded(format, model.bodies(), join(logDir, 'g2.jsonl'), bound);
      const usage = result.receipt.usage as Record<string, number>;
      assert.equal(usage['turns'], reads + 1);
      assert.equal(usage['turnsRequested'], reads + 1 - answered);
    });
  }

  /** A conversation of `turns` read_file turns with outputs of `chars` characters, and a steer in the middle. */
  function conversation(turns: number, chars: number): History {
    const items: ConversationItem[] = [{ kind: 'user', text: PROMPT, context: true }];
    for (let n = 1; n <= turns; n++) {
      const calls = [1, 2].map((k) => ({ id: `call_${n}_${k}`, name: 'read_file', arguments: `{"path":"f${k}"}` }));
      items.push({ kind: 'assistant', text: `turn ${n}`, toolCalls: calls });
      for (const call of calls)
        items.push({ kind: 'tool_result', callId: call.id, name: call.name, output: 'x'.repeat(chars) });
      if (n === 2) items.push({ kind: 'user', text: 'A message from the operator: go on' });
    }
    return { items, stubbed: new Set(), omitted: undefined };
  }

  for (const format of FORMATS) {
    it(`against ${format}, a history with turns left out is still a valid request: each call keeps its result`, () => {
      const request = requestFor(format);
      const call = {
        baseUrl: 'http://127.0.0.1:1/v1',
        model: 'm',
        maxOutputTokens: 100,
        signal: new AbortController().signal,
        firstByteTimeoutMs: 1,
        callTimeoutMs: 1,
      };
      const size = (items: readonly ConversationItem[]) =>
        JSON.stringify(request({ system: LOOP_SYSTEM, items, tools: LOOP_TOOLS }, call).body).length;
      const history = conversation(8, 3_000);
      const bound = size(sentItems(history)) / 3;
      const compaction = planCompaction(history, { bound, turn: 8, size });
      assert.ok(compaction?.omitted !== undefined, 'turns were left out');
      const stubbed: History = { ...history, items: [...history.items], stubbed: new Set() };
      for (const stub of compaction.stubbed)
        stubbed.items[stub.item] = { ...stubbed.items[stub.item]!, output: stub.stub } as ConversationItem;
      const sent = sentItems({ ...stubbed, omitted: compaction.omitted });
      assert.ok(size(sent) <= bound * COMPACT_TO);
      assert.deepEqual(sent[0], history.items[0]);
      assert.deepEqual(
        pairingProblems(format, request({ system: LOOP_SYSTEM, items: sent, tools: LOOP_TOOLS }, call).body as Json),
        [],
      );
      // The latest turn is whole: its answer and both results as they were.
      assert.deepEqual(sent.slice(-3), history.items.slice(-3));
    });
  }

  it('a compaction record that names an item which is not its call’s result fails the run loop_log_corrupt', async (t) => {
    const model = await scriptedModel('chat-completions', script(1));
    t.after(() => model.close());
    const { ws, logDir } = place(1);
    const where = {
      dir: logDir,
      generation: 1,
      runId: 'r',
      conversation: 'investigate',
      contextDigest: 'd',
      now: () => 'now',
    };
    const log = StepLog.open(where);
    log.append({
      t: 'compact',
      turn: 0,
      bound: 1,
      charsBefore: 2,
      charsAfter: 1,
      stubbed: [
        {
          item: 0,
          callId: 'call_1',
          name: 'read_file',
          outputChars: 9,
          digest: 'sha256:' + '0'.repeat(64),
          stub: '[stub]',
        },
      ],
    });
    log.close();
    const result = await runLoopDriver(
      DriverRunInput.parse(loopInput(ws, logDir, 'chat-completions', model.url, 20_000)),
      new AbortController().signal,
    );
    assert.equal(!result.ok && result.code, 'loop_log_corrupt');
    assert.equal(model.bodies().length, 0, 'the model was asked nothing');
  });
});
