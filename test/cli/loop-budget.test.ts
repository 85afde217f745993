import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { journalHas } from '../support/wait.js';
import { readLogFile } from '../../drivers/loop/step-log.js';
import { openHost } from '../../host/host.js';
import { createSupervisor, type Supervisor } from '../../kernel/index.js';
import { createRuntime } from '../../runtime/index.js';
import { startChatModel, type ChatModel } from '../../workloads/scripted/chat-model.js';
import { ordivon } from '../support/decision-requests.js';
import { killProcessesUnder } from '../support/temp.js';
import { FINDINGS, budgetedSpec, call, loopRun } from './loop-fixture.js';

/** The quickstart in seven answers: investigate reads twice before it writes its findings, then the fix. */
const QUICKSTART = [
  call('run_command', { command: 'node --test test/' }),
  call('read_file', { path: 'src/duration.js' }),
  call('write_file', { path: 'findings.json', content: FINDINGS }),
  call('finish', { summary: 'm is tried before ms' }),
  call('edit_file', { path: 'src/duration.js', old: '(h|m|s|ms)', new: '(ms|h|m|s)' }),
  call('write_file', { path: 'report.md', content: '# Milliseconds parse again\n' }),
  call('finish', { summary: 'fixed' }),
];

const REQUEST = 'quickstart-1/a1/g1/budget';

/** `ordivon run` of the quickstart on a loop harness, its investigate stage given `budget`. */
function budgetedRun(model: ChatModel, budget: Record<string, unknown>) {
  const run = loopRun('chat-completions', model.url);
  const spec = budgetedSpec(run.dir, budget);
  const args = run.args.map((arg, i) => (run.args[i - 1] === '--spec' ? spec : arg));
  return { ...run, spec, args };
}

/** Reads the Task's journal with a bare supervisor (no frontier: nothing runs). */
async function journal<T>(state: string, read: (sup: Supervisor) => T): Promise<T> {
  const sup = createSupervisor({ state });
  await sup.start();
  try {
    return read(sup);
  } finally {
    await sup.stop();
  }
}

describe('a stage over its budget, run by Loop v0 through ordivon run', { timeout: 180_000 }, () => {
  it('with onExceeded ask, a DecisionRequest asks a person; continue completes the Task, no answered turn asked again', async (t) => {
    const model = await startChatModel({ script: { turns: QUICKSTART } });
    t.after(() => model.close());
    const { dir, state, args } = budgetedRun(model, { tokens: 200, onExceeded: 'ask' });
    t.after(() => killProcessesUnder(dir));

    // 110 tokens, then 220: the second answer's call runs and the run stops over the 200.
    const asked = await ordivon(...args, '--json');
    assert.equal(asked.status, 1, asked.stderr);
    assert.match(asked.stderr, new RegExp(`pending DecisionRequest ${REQUEST} \\(about operator\\)`));
    assert.equal(model.requests.length, 2);
    const request = await journal(state, (sup) => {
      const task = sup.getTask('quickstart-1')!;
      assert.equal(task.state, 'evaluating');
      return sup.getObject<{
        allowed: string[];
        budgetImpact: string;
        evidence: string[];
      }>(task.context.requests[REQUEST]!.digest).body;
    });
    assert.deepEqual(request.allowed, ['continue', 'settle']);
    assert.match(
      request.budgetImpact,
      /^spent so far: 220 tokens in 2 model turns; continuing allows 200 tokens more$/,
    );
    assert.ok(request.evidence.includes("the run stopped over the stage's budget.tokens of 200"));

    const answered = await ordivon('decide', 'quickstart-1', REQUEST, '--answer', 'continue', '--state', state);
    assert.equal(answered.status, 0, answered.stderr);
    const done = await ordivon(...args, '--json');
    assert.equal(done.status, 0, done.stderr);
    assert.equal((JSON.parse(done.stdout) as { completed: boolean }).completed, true);
    assert.equal(model.requests.length, 7, 'each turn asked once');

    // Generation 2 went on with investigate's conversation (its two answered turns adopted), generation 3 is the fix.
    const logs = join(state, 'loops', 'quickstart-1', 'attempt-1');
    const answers = (g: number) => readLogFile(join(logs, `g${g}.jsonl`)).filter((r) => r.t === 'model_response');
    assert.deepEqual([answers(2).length, answers(3).length], [4, 3]);
    const events = await journal(state, (sup) => sup.events('quickstart-1'));
    assert.deepEqual(
      events.filter((e) => e.type === 'request.open').map((e) => e.data['requestId']),
      [REQUEST],
      'asked once, across both processes',
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'assignment.commit').map((e) => [e.origin, e.data['stage'], e.data.generation]),
      [
        ['external', 'investigate', 1],
        ['host', 'investigate', 2],
        ['external', 'fix', 3],
      ],
    );
  });

  it('without onExceeded, the run ends loop_token_budget, the stage settles without its artifact and nobody is asked', async (t) => {
    const model = await startChatModel({ script: { turns: QUICKSTART } });
    t.after(() => model.close());
    const { dir, state, args } = budgetedRun(model, { tokens: 100 });
    t.after(() => killProcessesUnder(dir));

    const stopped = await ordivon(...args, '--json');
    assert.equal(stopped.status, 1, stopped.stderr);
    assert.match(stopped.stderr, /missing_artifact/);
    assert.equal(model.requests.length, 1, 'no call after the answer that spent the budget');
    const runtime = await createRuntime({ root: join(state, 'runtime') });
    t.after(() => runtime.close());
    const [job] = await runtime.findJobs({ clientRequestId: 'quickstart-1/a1/g1/run' });
    assert.equal(job?.state, 'failed');
    assert.equal(job?.harness?.ok === false && job.harness.code, 'loop_token_budget');
    const events = await journal(state, (sup) => {
      const task = sup.getTask('quickstart-1')!;
      assert.equal(task.state, 'waiting');
      assert.deepEqual(task.context.requests, {});
      return sup.events('quickstart-1');
    });
    assert.deepEqual(
      events.filter((e) => e.type === 'assignment.commit').map((e) => e.origin),
      ['external'],
      'not dispatched again by the Host',
    );
    assert.deepEqual(events.find((e) => e.type === 'evaluation.settle')?.data['missing'], ['findings.json']);
  });

  it('refuses a stage with a token budget planned on a harness that is not Loop v0 (budget_unsupported, exit 2)', async (t) => {
    const model = await startChatModel({ script: { turns: [] } });
    t.after(() => model.close());
    const { args } = budgetedRun(model, { tokens: 100 });
    const planned = args.map((arg) => (arg === 'investigate=loop,fix=loop' ? 'investigate=shell,fix=loop' : arg));
    // The configuration names no harness shell: harness_unknown comes first; a command harness is budget_unsupported.
    const config = args[args.indexOf('--config') + 1]!;
    const written = JSON.parse(readFileSync(config, 'utf8')) as { harnesses: Record<string, unknown> };
    written.harnesses['shell'] = { driver: 'command', command: 'sh' };
    writeFileSync(config, JSON.stringify(written));
    const refused = await ordivon(...planned, '--json');
    assert.equal(refused.status, 2, refused.stderr);
    const error = (JSON.parse(refused.stderr.trim().split('\n').at(-1)!) as { error: { code: string; path: string } })
      .error;
    assert.deepEqual([error.code, error.path], ['budget_unsupported', '--stages[0]']);
    assert.equal(model.requests.length, 0);
  });
});

describe('a stage over its budget, asked across a restart and answered settle', { timeout: 120_000 }, () => {
  it('a restarted Host asks no second time; settle lets the stage settle as without ask, and no run is dispatched', async (t) => {
    const model = await startChatModel({ script: { turns: QUICKSTART } });
    t.after(() => model.close());
    const { dir, state, spec } = budgetedRun(model, { turns: 1, onExceeded: 'ask' });
    t.after(() => killProcessesUnder(dir));
    const boot = () =>
      openHost({
        state,
        harnesses: {
          loop: {
            driver: 'loop',
            model: 'scripted-model',
            loop: { format: 'chat-completions', baseUrl: model.url },
            network: 'none',
          },
        },
      });
    const request = 'quickstart-1/a1/g1/budget';
    const first = await boot();
    try {
      const sup = first.supervisor;
      const { taskId } = await sup.createTask(
        JSON.parse(readFileSync(spec, 'utf8')) as Parameters<Supervisor['createTask']>[0],
      );
      await sup.send(taskId, { type: 'assignment.commit', harness: 'loop', stage: 'investigate' });
      await journalHas(sup, taskId, 'request.open');
    } finally {
      await first.stop();
    }

    const second = await boot();
    try {
      const sup = second.supervisor;
      const task = sup.getTask('quickstart-1')!;
      assert.equal(task.state, 'evaluating');
      const asked = sup.getObject<{ budgetImpact: string }>(task.context.requests[request]!.digest);
      assert.match(
        asked.body.budgetImpact,
        /^spent so far: 110 tokens in 1 model turn; continuing allows 1 model turn more$/,
      );
      const answered = await sup.send('quickstart-1', { type: 'request.answer', requestId: request, answer: 'settle' });
      assert.equal(answered.admitted, true);
      assert.equal(await sup.waitFor('quickstart-1', ['waiting']), 'waiting');
      const events = sup.events('quickstart-1');
      assert.equal(events.filter((e) => e.type === 'request.open').length, 1, 'asked once, across the restart');
      assert.deepEqual(events.find((e) => e.type === 'evaluation.settle')?.data['missing'], ['findings.json']);
      assert.equal(events.filter((e) => e.type === 'dispatch.intend').length, 1);
      assert.equal(model.requests.length, 1);
    } finally {
      await second.stop();
    }
  });
});
