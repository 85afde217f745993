import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readLogFile, type LogRecord } from '../../drivers/loop/step-log.js';
import { createRuntime } from '../../runtime/index.js';
import { startChatModel, type ChatModel, type ChatReply } from '../../workloads/scripted/chat-model.js';
import { ordivon } from '../support/decision-requests.js';
import { killProcessesUnder } from '../support/temp.js';
import { until } from '../support/until.js';
import { FINDINGS, call, loopRun, usage } from './loop-fixture.js';
import { CLI } from './run-fixture.js';

/** The quickstart after the first investigate turn: the findings, finish, then the fix stage. */
const REST = [
  call('write_file', { path: 'findings.json', content: FINDINGS }),
  call('finish', { summary: 'm is tried before ms' }),
  call('edit_file', { path: 'src/duration.js', old: '(h|m|s|ms)', new: '(ms|h|m|s)' }),
  call('write_file', { path: 'report.md', content: '# Milliseconds parse again\n' }),
  call('finish', { summary: 'fixed' }),
];

const setup = (model: ChatModel) => loopRun('chat-completions', model.url);

/** Starts `ordivon run …` and SIGKILLs it once `when` resolves; resolves with how it ended. */
async function killedRun(args: string[], when: Promise<unknown>): Promise<string | null> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: 'ignore' });
  void when.then(() => child.kill('SIGKILL'));
  return new Promise((resolve) => child.once('close', (_code, signal) => resolve(signal)));
}

/** Resolves once `file` exists. */
const fileAppears = (file: string) => until(file, 120_000, async () => existsSync(file) || undefined);

/** Resolves once the log at `path` holds a record of kind `t`. */
function logReaches(path: string, t: LogRecord['t']): Promise<unknown> {
  return until(`${t} in ${path}`, 120_000, async () => {
    try {
      return (existsSync(path) && readLogFile(path).some((r) => r.t === t)) || undefined;
    } catch {
      return undefined; // a line still being written
    }
  });
}

/**
 * Cuts the log at `path` so it ends just after its last record of kind `t`, and returns the
 * kinds of the records cut off. Each record is written whole before the next one (synced or not,
 * a written record is in the file: a SIGKILL loses no written byte), so a log that ends after
 * record k is exactly what a SIGKILL between record k and record k+1 leaves on disk; the lines
 * kept are the bytes the run wrote.
 */
function cutLogAfter(path: string, t: LogRecord['t']): Array<LogRecord['t']> {
  const records = readLogFile(path);
  const keep = records.findLastIndex((r) => r.t === t) + 1;
  assert.ok(keep > 0, `${path} has a ${t} record`);
  const lines = readFileSync(path, 'utf8').split('\n').slice(0, keep);
  writeFileSync(path, lines.map((line) => line + '\n').join(''));
  return records.slice(keep).map((r) => r.t);
}

/** Model answers recorded across every generation's log of the Attempt, and tool calls run. */
function counts(state: string): { answers: number; requests: number; results: number } {
  const logs = join(state, 'loops', 'quickstart-1', 'attempt-1');
  const last = (g: number) => readLogFile(join(logs, `g${g}.jsonl`));
  // The newest generation of each stage holds every record of its conversation (adopted ones included).
  const all = [...last(2), ...last(3)];
  return {
    answers: all.filter((r) => r.t === 'model_response').length,
    requests: all.filter((r) => r.t === 'model_request').length,
    results: all.filter((r) => r.t === 'tool_result').length,
  };
}

describe('ordivon run with Loop v0, its Host SIGKILLed mid-loop and run again', { timeout: 180_000 }, () => {
  it('during a model call: the Task completes, the answered turns are not asked again', async (t) => {
    const held: ChatReply = { toolCalls: [], usage, hang: true };
    const model = await startChatModel({
      script: { turns: [held, call('run_command', { command: 'node --test test/' }), ...REST] },
    });
    t.after(() => model.close());
    const { dir, state, args } = setup(model);
    t.after(() => killProcessesUnder(dir));
    assert.equal(await killedRun(args, model.waitForRequests(1)), 'SIGKILL');
    const resumed = await ordivon(...args, '--json');
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.equal((JSON.parse(resumed.stdout) as { completed: boolean }).completed, true);
    // The held call once (its request is in the log twice: asked, then asked again), then each of the six answered turns once.
    assert.equal(model.requests.length, 7);
    assert.deepEqual(counts(state), { answers: 6, requests: 7, results: 6 });
  });

  it('during a tool call: the Task completes, the call is not run again and the model is told its result is unknown', async (t) => {
    const model = await startChatModel({
      script: {
        turns: [call('run_command', { command: 'echo ran >> runs.txt; touch started.mark; sleep 600' }), ...REST],
      },
    });
    t.after(() => model.close());
    const { dir, state, args } = setup(model);
    t.after(() => killProcessesUnder(dir));
    const mark = join(state, 'workspaces', 'quickstart-1', 'attempt-1', 'started.mark');
    assert.equal(await killedRun(args, fileAppears(mark)), 'SIGKILL');
    const resumed = await ordivon(...args, '--json');
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.equal((JSON.parse(resumed.stdout) as { completed: boolean }).completed, true);
    assert.equal(model.requests.length, 6, 'each turn asked once');
    assert.match(JSON.stringify(model.requests[1]!.body), /result of this call is unknown/);
    assert.deepEqual(counts(state), { answers: 6, requests: 6, results: 6 });
  });

  // The two kill points between steps (after a model response, after a tool result) cannot be hit
  // by a timed SIGKILL: the next record follows within microseconds. So each test SIGKILLs the real
  // run at a point it can hold (a tool call that waits for a file, a model call the model holds),
  // then cuts the log back to the record the kill point follows: the durable state a SIGKILL
  // between those two fsyncs leaves (see cutLogAfter), and runs again on it.

  it('after a model response: the Task completes, the answered turn is not asked again and its call runs once', async (t) => {
    // No side effect before `go` exists: the call the first run started changes nothing.
    const waitForGo = 'while [ ! -e go ]; do sleep 0.05; done; echo ran >> runs.txt';
    const model = await startChatModel({ script: { turns: [call('run_command', { command: waitForGo }), ...REST] } });
    t.after(() => model.close());
    const { dir, state, args } = setup(model);
    t.after(() => killProcessesUnder(dir));
    const log = join(state, 'loops', 'quickstart-1', 'attempt-1', 'g1.jsonl');
    const workspace = join(state, 'workspaces', 'quickstart-1', 'attempt-1');
    assert.equal(await killedRun(args, logReaches(log, 'tool_intent')), 'SIGKILL');
    assert.deepEqual(cutLogAfter(log, 'model_response'), ['tool_intent']);
    // A kill before the intent is durable leaves no command running. A confined command dies with
    // the Host already (its sandbox's parent); this stops one that outlived it, were there any.
    killProcessesUnder(workspace);
    writeFileSync(join(workspace, 'go'), '');
    const resumed = await ordivon(...args, '--json');
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.equal((JSON.parse(resumed.stdout) as { completed: boolean }).completed, true);
    assert.equal(model.requests.length, 6, 'each turn asked once');
    assert.equal(readFileSync(join(workspace, 'runs.txt'), 'utf8'), 'ran\n', 'the call ran once');
    assert.deepEqual(counts(state), { answers: 6, requests: 6, results: 6 });
  });

  it('after a tool result: the Task completes, no answered turn is asked again and the call is not run again', async (t) => {
    const held: ChatReply = { toolCalls: [], usage, hang: true };
    const model = await startChatModel({
      // The held reply answers the second request, which the cut takes out of the log; the run after
      // it asks that turn again and gets the next entry.
      script: { turns: [call('run_command', { command: 'echo ran >> runs.txt' }), held, ...REST] },
    });
    t.after(() => model.close());
    const { dir, state, args } = setup(model);
    t.after(() => killProcessesUnder(dir));
    const log = join(state, 'loops', 'quickstart-1', 'attempt-1', 'g1.jsonl');
    const workspace = join(state, 'workspaces', 'quickstart-1', 'attempt-1');
    assert.equal(await killedRun(args, model.waitForRequests(2)), 'SIGKILL');
    assert.deepEqual(cutLogAfter(log, 'tool_result'), ['model_request']);
    const resumed = await ordivon(...args, '--json');
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.equal((JSON.parse(resumed.stdout) as { completed: boolean }).completed, true);
    // The first turn once, the held request, then each of the five turns after it once.
    assert.equal(model.requests.length, 7);
    assert.equal(readFileSync(join(workspace, 'runs.txt'), 'utf8'), 'ran\n', 'the call ran once');
    assert.deepEqual(counts(state), { answers: 6, requests: 6, results: 6 });
  });
});

describe(
  'ordivon run with Loop v0, its Host SIGKILLed after the loop ended and before the run was recorded',
  { timeout: 180_000 },
  () => {
    // Between the loop's end record and the Runtime's record of its job there is no point a run
    // can be held at, so the Host is SIGKILLed while it waits for the fix stage's last answer and
    // that answer and the end are then appended to the log as the loop writes them: what a SIGKILL
    // just after the loop's end leaves (the job abandoned, the conversation ended).
    it('the next run reports the ended conversation again: nothing is asked again, and the Task completes', async (t) => {
      const held: ChatReply = { toolCalls: [], usage, hang: true };
      const [findings, finishInvestigate, edit, report] = REST;
      const model = await startChatModel({
        script: {
          turns: [
            call('run_command', { command: 'node --test test/' }),
            findings!,
            finishInvestigate!,
            edit!,
            report!,
            held,
          ],
        },
      });
      t.after(() => model.close());
      const { dir, state, args } = setup(model);
      t.after(() => killProcessesUnder(dir));
      assert.equal(await killedRun(args, model.waitForRequests(6)), 'SIGKILL');
      const log = join(state, 'loops', 'quickstart-1', 'attempt-1', 'g2.jsonl');
      const turn = readLogFile(log).filter((r) => r.t === 'model_response').length;
      const at = new Date().toISOString();
      const answer = {
        text: 'fixed: ms is tried first',
        toolCalls: [],
        usage: { inputTokens: 10, outputTokens: 5 },
        stopReason: 'stop',
      };
      appendFileSync(
        log,
        `${JSON.stringify({ t: 'model_response', turn, answer, at })}\n${JSON.stringify({ t: 'end', reason: 'model_stopped', at })}\n`,
      );
      const resumed = await ordivon(...args, '--json');
      assert.equal(resumed.status, 0, resumed.stderr);
      assert.equal((JSON.parse(resumed.stdout) as { completed: boolean }).completed, true);
      assert.equal(model.requests.length, 6, 'the ended conversation is not asked anything again');
      const g3 = readLogFile(join(state, 'loops', 'quickstart-1', 'attempt-1', 'g3.jsonl'));
      assert.equal(g3[0]?.t === 'start' && g3[0].adopted?.generation, 2);
      assert.deepEqual(
        g3.filter((r) => r.t === 'end').map((r) => r.t === 'end' && r.reason),
        ['model_stopped'],
      );
    });
  },
);

describe('ordivon run with Loop v0, its Task cancelled while the model answers', { timeout: 120_000 }, () => {
  it('the model call in flight is aborted (its connection closed), and the run ends task_cancelled', async (t) => {
    const model = await startChatModel({ script: { turns: [{ toolCalls: [], usage, hang: true }] } });
    t.after(() => model.close());
    const { dir, state, args } = setup(model);
    t.after(() => killProcessesUnder(dir));
    const run = ordivon(...args, '--json');
    await model.waitForRequests(1);
    const sent = await ordivon(
      'send',
      'quickstart-1',
      '{"type":"task.cancel","reason":"not needed"}',
      '--state',
      state,
    );
    assert.equal(sent.status, 0, sent.stderr);
    const committed = performance.now();
    await model.streamsClosed();
    const closedAfterMs = performance.now() - committed;
    const r = await run;
    assert.equal(r.status, 1);
    assert.match(r.stderr, /task_cancelled/);
    assert.equal(model.requests.length, 1, 'nothing was asked after the cancel');
    // The Host cancelled the run's job for the cancel itself, not as the run's exit closed the Runtime.
    const runtime = await createRuntime({ root: join(state, 'runtime') });
    t.after(() => runtime.close());
    const [job] = await runtime.findJobs({ clientRequestId: 'quickstart-1/a1/g1/run' });
    assert.equal(job?.state, 'cancelled');
    assert.equal(job?.stopReason, 'cancel');
    assert.equal(job?.harness?.ok === false && job.harness.code, 'loop_aborted');
    t.diagnostic(`model connection closed ${closedAfterMs.toFixed(0)} ms after the cancel was committed`);
  });
});

describe('ordivon run with Loop v0, steered while it works', { timeout: 120_000 }, () => {
  it('an operator task.steer reaches the model at its next turn boundary, and the Task completes', async (t) => {
    const waitForGo = call('run_command', { command: 'while [ ! -e go ]; do sleep 0.05; done; echo went' });
    const model = await startChatModel({ script: { turns: [waitForGo, ...REST] } });
    t.after(() => model.close());
    const { dir, state, args } = setup(model);
    t.after(() => killProcessesUnder(dir));
    const run = ordivon(...args, '--json');
    // The first answer is a command that waits: the loop is inside a turn when the steer is sent.
    await model.waitForRequests(1);
    const steer = '{"type":"task.steer","message":"Keep the fix to one line."}';
    const sent = await ordivon('send', 'quickstart-1', steer, '--state', state);
    assert.equal(sent.status, 0, sent.stderr);
    writeFileSync(join(state, 'workspaces', 'quickstart-1', 'attempt-1', 'go'), '');
    const r = await run;
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(JSON.stringify(model.requests[0]!.body), /Keep the fix to one line/);
    assert.match(
      JSON.stringify(model.requests[1]!.body),
      /A message from the operator [^"]*: Keep the fix to one line\./,
    );
    const steers = readLogFile(join(state, 'loops', 'quickstart-1', 'attempt-1', 'g1.jsonl')).filter(
      (r) => r.t === 'steer',
    );
    assert.equal(steers.length, 1, 'recorded once, in the conversation it was given to');
  });
});
