import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runLoopDriver } from '../../drivers/loop/index.js';
import { readLogFile, StepLog, type NewRecord } from '../../drivers/loop/step-log.js';
import { DriverResult, DriverRunInput, type DriverRunInputIn } from '../../drivers/receipt.js';
import { startAnthropicModel } from '../../workloads/scripted/anthropic-model.js';
import { startChatModel, type ChatReply } from '../../workloads/scripted/chat-model.js';
import { startResponsesModel } from '../../workloads/scripted/responses-model.js';
import type { ResponsesStep } from '../../workloads/scripted/responses-script.js';
import { tempDir } from '../support/temp.js';

const here = dirname(fileURLToPath(import.meta.url));
const CHILD = join(here, '..', 'fixtures', 'loop', 'loop-child.js');
const SEED = join(here, '..', '..', '..', 'workloads', 'duration-v1', 'repo');

const FINDINGS = JSON.stringify({ failing: ['parses milliseconds'], cause: 'the unit pattern tries m before ms' });

/** The investigate stage of the quickstart, as three tool calls: run the tests, write the findings, finish. */
const INVESTIGATE = [
  { name: 'run_command', arguments: { command: 'node --test test/' } },
  { name: 'write_file', arguments: { path: 'findings.json', content: FINDINGS } },
  { name: 'finish', arguments: { summary: 'the tests fail for milliseconds' } },
] as const;

/** A Task Attempt's workspace (the quickstart's seed) and a log folder beside it. */
function place(): { ws: string; logDir: string } {
  const dir = tempDir('ordivon-loop-');
  const ws = join(dir, 'ws');
  cpSync(SEED, ws, { recursive: true });
  return { ws, logDir: join(dir, 'loops', 'attempt-1') };
}

function loopInput(
  ws: string,
  logDir: string,
  format: 'chat-completions' | 'responses' | 'anthropic-messages',
  baseUrl: string,
  generation = 1,
  extra: Partial<DriverRunInputIn> = {},
): DriverRunInputIn {
  return {
    driver: 'loop',
    runId: `task-1/a1/g${generation}/run`,
    command: 'ordivon-loop',
    cwd: ws,
    prompt: 'Stage: investigate\nRun the tests and write findings.json.',
    contextDigest: 'sha256:' + 'c'.repeat(64),
    model: 'scripted-model',
    timeoutMs: 120_000,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    expectedArtifacts: ['findings.json'],
    loop: { format, baseUrl, logDir, generation, conversation: 'investigate', maxTurns: 10 },
    ...extra,
  };
}

/** Runs one loop run in a child process (loop-child.ts); resolves with its result, or undefined when it was killed. */
async function runChild(
  input: DriverRunInputIn,
  killAfter?: { record: NewRecord['t']; nth: number },
  started?: (pid: number) => void,
): Promise<DriverResult | undefined> {
  const dir = tempDir('ordivon-loop-child-');
  const inFile = join(dir, 'in.json');
  const outFile = join(dir, 'out.json');
  writeFileSync(inFile, JSON.stringify({ input, ...(killAfter ? { killAfter } : {}) }));
  const child = spawn(process.execPath, [CHILD, inFile, outFile], { stdio: ['ignore', 'inherit', 'inherit'] });
  started?.(child.pid!);
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  if (signal === 'SIGKILL') return undefined;
  assert.equal(code, 0, 'the loop child exited cleanly');
  return DriverResult.parse(JSON.parse(readFileSync(outFile, 'utf8')));
}

const chatTurns = (calls: readonly { name: string; arguments: Record<string, unknown> }[]): ChatReply[] =>
  calls.map((call) => ({
    toolCalls: [{ name: call.name, arguments: call.arguments }],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
    hang: false,
  }));

const steps = (calls: readonly { name: string; arguments: Record<string, unknown> }[]): ResponsesStep[] =>
  calls.map((call) => ({ type: 'tool', name: call.name, arguments: call.arguments }));

describe('Loop v0 (driver loop)', { timeout: 120_000 }, () => {
  for (const format of ['chat-completions', 'responses', 'anthropic-messages'] as const) {
    it(`runs the quickstart's investigate stage against a scripted ${format} model`, async (t) => {
      const server =
        format === 'chat-completions'
          ? await startChatModel({ script: { turns: chatTurns(INVESTIGATE) } })
          : format === 'responses'
            ? await startResponsesModel({ script: steps(INVESTIGATE) })
            : await startAnthropicModel({ script: steps(INVESTIGATE) });
      t.after(() => server.close());
      const baseUrl = server.url;
      const { ws, logDir } = place();
      const result = await runLoopDriver(
        DriverRunInput.parse(loopInput(ws, logDir, format, baseUrl)),
        new AbortController().signal,
      );
      assert.ok(result.ok, JSON.stringify(result));
      const { receipt } = result;
      assert.equal(receipt.stopReason, 'finished');
      assert.equal(receipt.finalText, 'the tests fail for milliseconds');
      assert.deepEqual(
        receipt.artifacts.map((a) => a.name),
        ['findings.json'],
      );
      assert.equal(readFileSync(join(ws, 'findings.json'), 'utf8'), FINDINGS);
      const usage = receipt.usage as Record<string, number>;
      assert.equal(usage['turns'], 3);
      assert.equal(usage['toolCallsRun'], 3);
      assert.ok(usage['inputTokens']! > 0 && usage['outputTokens']! > 0);
      // The command's result went back to the model: the seed's frozen tests fail (exit 1).
      assert.match(JSON.stringify(server.requests[1]!.body), /exit 1/);
      const records = readLogFile(join(logDir, 'g1.jsonl')).map((r) => r.t);
      assert.deepEqual(records.slice(0, 5), ['start', 'model_request', 'model_response', 'tool_intent', 'tool_result']);
      assert.equal(records.at(-1), 'end');
    });
  }

  /** A script whose first call changes the workspace (a command that counts its runs), then writes, then finishes. */
  const COUNTED = [
    { name: 'run_command', arguments: { command: 'echo ran >> runs.txt' } },
    { name: 'write_file', arguments: { path: 'findings.json', content: FINDINGS } },
    { name: 'finish', arguments: { summary: 'done' } },
  ] as const;
  const runsIn = (ws: string): number =>
    existsSync(join(ws, 'runs.txt')) ? readFileSync(join(ws, 'runs.txt'), 'utf8').split('\n').length - 1 : 0;

  for (const [kind, killAfter, runs] of [
    ['after a model response', { record: 'model_response', nth: 1 }, 1],
    ['after a tool call recorded its intent (its result unknown)', { record: 'tool_intent', nth: 1 }, 0],
    ['after a tool call recorded its result', { record: 'tool_result', nth: 1 }, 1],
  ] as const) {
    it(`killed ${kind}, the next generation asks no answered turn again and runs no recorded call again`, async (t) => {
      const model = await startChatModel({ script: { turns: chatTurns(COUNTED) } });
      t.after(() => model.close());
      const { ws, logDir } = place();
      assert.equal(await runChild(loopInput(ws, logDir, 'chat-completions', model.url, 1), killAfter), undefined);
      const before = model.requests.length;
      const result = await runChild(loopInput(ws, logDir, 'chat-completions', model.url, 2));
      assert.ok(result?.ok, JSON.stringify(result));
      // Three turns in all, each asked once: none of the first run's answered turns was asked again.
      assert.equal(model.requests.length, 3);
      assert.equal(before, 1);
      assert.equal(runsIn(ws), runs, 'the counted command ran once, or never when its result was lost');
      const usage = result.receipt.usage as Record<string, number>;
      assert.equal(usage['turnsRequested'], 2);
      assert.equal(usage['turns'], 3);
      assert.equal(usage['toolResultsUnknown'], runs === 0 ? 1 : 0);
      if (runs === 0) assert.match(JSON.stringify(model.requests[1]!.body), /result of this call is unknown/);
      // The older generation's log is closed and its records adopted.
      assert.ok(existsSync(join(logDir, 'g1.closed')));
      assert.equal(readLogFile(join(logDir, 'g2.jsonl'))[0]?.t, 'start');
    });
  }

  it('killed during a model call, the next generation asks that unanswered turn again, and only it', async (t) => {
    const held: ChatReply = {
      toolCalls: [],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      hang: true,
    };
    const model = await startChatModel({ script: { turns: [held, ...chatTurns(COUNTED)] } });
    t.after(() => model.close());
    const { ws, logDir } = place();
    const killed = runChild(loopInput(ws, logDir, 'chat-completions', model.url, 1), undefined, (pid) => {
      void model.waitForRequests(1).then(() => process.kill(pid, 'SIGKILL'));
    });
    assert.equal(await killed, undefined);
    const result = await runChild(loopInput(ws, logDir, 'chat-completions', model.url, 2));
    assert.ok(result?.ok, JSON.stringify(result));
    assert.equal(model.requests.length, 4, 'the held turn once, then the three answered ones once each');
    assert.equal(runsIn(ws), 1);
    const records = readLogFile(join(logDir, 'g2.jsonl')).map((r) => r.t);
    assert.equal(records.filter((t) => t === 'model_response').length, 3);
  });

  it('a loop whose generation a newer one has closed stops before its next step (loop_closed)', async (t) => {
    const model = await startChatModel({ script: { turns: chatTurns(COUNTED) } });
    t.after(() => model.close());
    const { ws, logDir } = place();
    assert.equal(
      await runChild(loopInput(ws, logDir, 'chat-completions', model.url, 1), { record: 'tool_result', nth: 1 }),
      undefined,
    );
    assert.ok((await runChild(loopInput(ws, logDir, 'chat-completions', model.url, 2)))?.ok);
    const stale = await runLoopDriver(
      DriverRunInput.parse(loopInput(ws, logDir, 'chat-completions', model.url, 1)),
      new AbortController().signal,
    );
    assert.equal(stale.ok, false);
    assert.equal(!stale.ok && stale.code, 'loop_closed');
    assert.equal(model.requests.length, 3, 'the stale generation asked the model nothing');
  });

  it('a cancel aborts the model call in flight: the connection closes and the run ends loop_aborted', async (t) => {
    const held: ChatReply = {
      toolCalls: [],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      hang: true,
    };
    const model = await startChatModel({ script: { turns: [held] } });
    t.after(() => model.close());
    const { ws, logDir } = place();
    const cancel = new AbortController();
    const run = runLoopDriver(
      DriverRunInput.parse(loopInput(ws, logDir, 'chat-completions', model.url)),
      cancel.signal,
    );
    await model.waitForRequests(1);
    cancel.abort(new Error('task.cancel'));
    const result = await run;
    await model.streamsClosed();
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.code, 'loop_aborted');
    assert.equal(readLogFile(join(logDir, 'g1.jsonl')).at(-1)?.t, 'end');
  });

  it('stops at its turn budget with loop_turn_budget and the receipt so far', async (t) => {
    const model = await startChatModel({ script: { turns: chatTurns(COUNTED) } });
    t.after(() => model.close());
    const { ws, logDir } = place();
    const input = loopInput(ws, logDir, 'chat-completions', model.url);
    const result = await runLoopDriver(
      DriverRunInput.parse({ ...input, loop: { ...input.loop!, maxTurns: 1 } }),
      new AbortController().signal,
    );
    assert.equal(!result.ok && result.code, 'loop_turn_budget');
    assert.equal(!result.ok && result.receipt?.stopReason, 'turn_budget');
    assert.equal(model.requests.length, 1);
    assert.equal(runsIn(ws), 1, "the answered turn's call still ran before the budget stopped the next one");
  });

  it("stops at its stage's token budget with loop_token_budget; the next generation goes on where it stopped, its budget afresh, asking no answered turn again", async (t) => {
    const model = await startChatModel({ script: { turns: chatTurns(COUNTED) } });
    t.after(() => model.close());
    const { ws, logDir } = place();
    const run = (generation: number) => {
      const input = loopInput(ws, logDir, 'chat-completions', model.url, generation);
      return runLoopDriver(
        DriverRunInput.parse({ ...input, loop: { ...input.loop!, stageMaxTokens: 200 } }),
        new AbortController().signal,
      );
    };
    // Each answer spends 110 tokens: the second reaches 220, its call runs, and no third call is made.
    const over = await run(1);
    assert.equal(!over.ok && over.code, 'loop_token_budget');
    assert.equal(!over.ok && over.receipt?.stopReason, 'stage_token_budget');
    assert.equal(model.requests.length, 2);
    assert.equal(existsSync(join(ws, 'findings.json')), true, "the answered turn's call ran");

    const next = await run(2);
    assert.ok(next.ok, JSON.stringify(next));
    assert.equal(next.receipt.stopReason, 'finished');
    assert.equal(model.requests.length, 3, 'only the unanswered turn was asked');
    assert.equal(runsIn(ws), 1, 'no recorded call ran again');
    assert.equal((next.receipt.usage as Record<string, number>)['turns'], 3, 'the conversation went on');
    // The older run's end is kept in the newer log: the stage's budget counts from it.
    const ends = readLogFile(join(logDir, 'g2.jsonl')).filter((r) => r.t === 'end');
    assert.deepEqual(
      ends.map((r) => r.t === 'end' && r.reason),
      ['stage_token_budget', 'finished'],
    );
  });

  it("killed and taken up by the next generation, its stage's budget goes on counting: a crash does not renew it", async (t) => {
    const model = await startChatModel({ script: { turns: chatTurns(COUNTED) } });
    t.after(() => model.close());
    const { ws, logDir } = place();
    const input = (generation: number) => {
      const base = loopInput(ws, logDir, 'chat-completions', model.url, generation);
      return { ...base, loop: { ...base.loop!, stageMaxTokens: 200 } };
    };
    assert.equal(await runChild(input(1), { record: 'tool_result', nth: 1 }), undefined);
    // 110 tokens before the kill, 220 after the next answer: over the 200, though this run spent 110.
    const result = await runChild(input(2));
    assert.equal(result && !result.ok && result.code, 'loop_token_budget');
    assert.equal(model.requests.length, 2);
  });

  it("stops at its stage's turn budget with loop_turn_budget, before the harness's", async (t) => {
    const model = await startChatModel({ script: { turns: chatTurns(COUNTED) } });
    t.after(() => model.close());
    const { ws, logDir } = place();
    const input = loopInput(ws, logDir, 'chat-completions', model.url);
    const result = await runLoopDriver(
      DriverRunInput.parse({ ...input, loop: { ...input.loop!, maxTurns: 5, stageMaxTurns: 1 } }),
      new AbortController().signal,
    );
    assert.equal(!result.ok && result.code, 'loop_turn_budget');
    assert.equal(!result.ok && result.receipt?.stopReason, 'stage_turn_budget');
    assert.equal(model.requests.length, 1);
  });

  it("a run over its harness's budget is not taken up by the next generation: that one starts over", async (t) => {
    const model = await startChatModel({ script: { turns: [...chatTurns(COUNTED), ...chatTurns(COUNTED)] } });
    t.after(() => model.close());
    const { ws, logDir } = place();
    const input = loopInput(ws, logDir, 'chat-completions', model.url);
    const over = await runLoopDriver(
      DriverRunInput.parse({ ...input, loop: { ...input.loop!, maxTurns: 1 } }),
      new AbortController().signal,
    );
    assert.equal(!over.ok && over.code, 'loop_turn_budget');
    const again = StepLog.open({
      dir: logDir,
      generation: 2,
      runId: 'task-1/a1/g2/run',
      conversation: 'investigate',
      contextDigest: 'd',
      now: () => 'now',
    });
    again.close();
    assert.deepEqual(
      again.records.map((r) => r.t),
      ['start'],
    );
  });

  it('a log whose last line a crash tore is read without it, and the next record starts a line of its own', () => {
    const { logDir } = place();
    const where = { dir: logDir, generation: 1, runId: 'r', conversation: 'c', contextDigest: 'd', now: () => 'now' };
    const log = StepLog.open(where);
    log.append({ t: 'model_request', turn: 0 });
    log.close();
    appendFileSync(join(logDir, 'g1.jsonl'), '{"t":"model_resp');
    const again = StepLog.open(where);
    assert.deepEqual(
      again.records.map((r) => r.t),
      ['start', 'model_request'],
    );
    again.append({ t: 'model_request', turn: 0 });
    again.close();
    assert.deepEqual(
      readLogFile(join(logDir, 'g1.jsonl')).map((r) => r.t),
      ['start', 'model_request', 'model_request'],
    );
  });
});
