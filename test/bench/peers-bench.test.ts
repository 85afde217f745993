import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DriverLine } from '../../bench/peers/driver-protocol.js';
import { RESULT_FILE, startModelStub, stepFile, taskPrompt } from '../../bench/peers/model-stub.js';
import { tempDir } from '../support/temp.js';

// The peers' own step (plain JavaScript beside their packages) against the stub, as each driver takes it.
const agentStep = fileURLToPath(new URL('../../../bench/peers/shared/agent-step.mjs', import.meta.url));
interface Answer {
  content: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
}
interface AgentStep {
  callModel(url: string, messages: unknown[]): Promise<Answer>;
  requestMessages(task: string, steps: number, history: Array<{ answer: Answer; output: string }>): unknown[];
  runTools(workdir: string, answer: Answer): Promise<string>;
  isDone(answer: Answer): boolean;
}
const step = (await import(agentStep)) as AgentStep;

async function agent(url: string, task: string, steps: number, workdir: string) {
  const history: Array<{ answer: Answer; output: string }> = [];
  for (;;) {
    const answer = await step.callModel(url, step.requestMessages(task, steps, history));
    if (step.isDone(answer)) return history;
    history.push({ answer, output: await step.runTools(workdir, answer) });
  }
}

describe('the peers bench: its stub model and the step every peer takes', () => {
  it('answers each step once in turn, ~4 KB each, and the last writes the result', async (t) => {
    const stub = await startModelStub({ payloadBytes: 4096 });
    t.after(() => stub.close());
    const work = tempDir('ordivon-test-peers-stub-');
    const history = await agent(stub.url, 'a', 5, work);
    assert.equal(history.length, 5);
    assert.deepEqual(
      stub.calls.map((c) => [c.task, c.step]),
      [1, 2, 3, 4, 5].map((n) => ['a', n]),
    );
    assert.ok(history.every((h) => h.answer.content.length > 4096));
    assert.deepEqual(
      readdirSync(join(work, 'steps')).sort(),
      [1, 2, 3, 4].map((n) => stepFile(n).slice(6)),
    );
    assert.equal(JSON.parse(readFileSync(join(work, RESULT_FILE), 'utf8')).step, 5);
    assert.equal(stub.repeatedCalls(), 0);
  });

  it('holds the step it is told to: a command that logs its run to tools.log', async (t) => {
    const stub = await startModelStub({ payloadBytes: 64 });
    t.after(() => stub.close());
    stub.setHold({ task: 'h', step: 2, sleepS: 0 });
    const work = tempDir('ordivon-test-peers-hold-');
    await agent(stub.url, 'h', 3, work);
    assert.equal(readFileSync(join(work, 'tools.log'), 'utf8'), `h 2 ${stepFile(2)}\n`);
  });

  it('reads the step from the tool calls only, and counts a step asked again', async (t) => {
    const stub = await startModelStub({ payloadBytes: 64 });
    t.after(() => stub.close());
    // A prompt naming files an earlier try left is a conversation that starts over: step 1.
    const prompt = `${taskPrompt('r', 3)} Files here: ${stepFile(2)}, ${RESULT_FILE}.`;
    const ask = (messages: unknown[]) => step.callModel(stub.url, messages);
    await ask([{ role: 'user', content: prompt }]);
    await ask([{ role: 'user', content: prompt }]);
    assert.deepEqual(
      stub.calls.map((c) => c.step),
      [1, 1],
    );
    assert.equal(stub.count('r', 1), 2);
    assert.equal(stub.repeatedCalls(), 1);
  });

  it('refuses a request that names no Task, with a 400', async (t) => {
    const stub = await startModelStub({ payloadBytes: 64 });
    t.after(() => stub.close());
    await assert.rejects(step.callModel(stub.url, [{ role: 'user', content: 'hello' }]), /model answered 400/);
    assert.equal(stub.calls.length, 0);
  });
});

describe("the peers bench's Host driver speaks the drivers' protocol", { timeout: 120_000 }, () => {
  it('runs its Tasks to completed through openHost and says ready, then done', async (t) => {
    const stub = await startModelStub({ payloadBytes: 4096 });
    t.after(() => stub.close());
    const dir = tempDir('ordivon-test-peers-host-');
    const config = {
      mode: 'run',
      dir,
      modelUrl: stub.url,
      tasks: ['p1', 'p2'],
      steps: 3,
      concurrency: 2,
      ports: [],
      store: 'lmdb',
    };
    const file = fileURLToPath(new URL('../../bench/peers/host-driver.js', import.meta.url));
    const child = spawn(process.execPath, [file, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'inherit'] });
    t.after(() => child.kill('SIGKILL'));
    const lines: DriverLine[] = [];
    for await (const text of createInterface({ input: child.stdout })) {
      const line = DriverLine.parse(JSON.parse(text));
      lines.push(line);
      if (line.t === 'done' || line.t === 'error') child.stdin.end();
    }
    assert.deepEqual(
      lines.map((l) => l.t),
      ['ready', 'done'],
      JSON.stringify(lines),
    );
    assert.equal(lines[0]?.t === 'ready' && lines[0].pids.executor, child.pid);
    assert.equal(lines[1]?.t === 'done' && lines[1].ended, 2);
    for (const task of ['p1', 'p2'])
      assert.deepEqual(
        stub.calls.filter((c) => c.task === task).map((c) => c.step),
        [1, 2, 3],
      );
    // Each Task's work in its Attempt's workspace under the folder's `work/`.
    assert.ok(existsSync(join(dir, 'work', 'p1', 'attempt-1', RESULT_FILE)));
  });
});
