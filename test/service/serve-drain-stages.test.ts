import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gatedAgent } from '../support/gated-agent.js';
import { tempDir } from '../support/temp.js';
import { CLI, http, nextCommit, startServe, type ServeChild } from './serve-child.js';

/** A state root served with the gated agent (test/support/gated-agent.ts) as harness `agent`. */
function agentHost() {
  const dir = tempDir('ordivon-drain-');
  const state = join(dir, 'state');
  const agent = gatedAgent(dir);
  const config = join(dir, 'harnesses.json');
  writeFileSync(config, JSON.stringify({ harnesses: { agent: agent.harness } }));
  return {
    ...agent,
    state,
    spec: agent.spec('drain-stage'),
    serve: (...flags: string[]) => startServe(['--state', state, '--port', '0', '--config', config, ...flags]),
  };
}

/** Resolves once the service has removed service.json: the first step of its drain. */
function drainStarted(state: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(state, () => {
      if (!existsSync(join(state, 'service.json'))) {
        watcher.close();
        resolve();
      }
    });
  });
}

/** What the `drained` log line says the drain did. */
function drained(serve: ServeChild): { running: number; finished: number; stopped: number } {
  const line = serve
    .stderr()
    .split('\n')
    .find((l) => l.includes('"msg":"drained"'));
  assert.ok(line, serve.stderr());
  const { running, finished, stopped } = JSON.parse(line) as { running: number; finished: number; stopped: number };
  return { running, finished, stopped };
}

/** Opens the Task's stream from its first revision and resolves when a commit reaches `state`. */
async function reaches(serve: ServeChild, taskId: string, state: string) {
  const stream = await nextCommit(serve.ready, (c) => c.state === state, `?taskId=${taskId}&after=0`);
  try {
    return await stream.commit;
  } finally {
    stream.close();
  }
}

async function assign(serve: ServeChild, taskId: string) {
  const sent = await http(serve.ready, 'POST', `/tasks/${taskId}/events`, {
    body: { type: 'assignment.commit', harness: 'agent', stage: 'work' },
  });
  assert.equal(sent.status, 200, sent.text);
}

function events(state: string, taskId: string): Array<{ type: string; origin: string; data: any }> {
  const shown = spawnSync(process.execPath, [CLI, 'show', taskId, '--events', '--state', state, '--json'], {
    encoding: 'utf8',
  });
  assert.equal(shown.status, 0, shown.stderr);
  return JSON.parse(shown.stdout).events;
}

describe('ordivon serve drains running stages on SIGTERM', { timeout: 120_000 }, () => {
  it('SIGTERM during a running stage stops it as recoverable; the restarted serve dispatches it again under a new generation and the Task completes without a person', async () => {
    const host = agentHost();
    const first = await host.serve('--drain-timeout', '0');
    assert.equal((await http(first.ready, 'POST', '/tasks', { body: host.spec })).status, 201);
    await assign(first, 'drain-stage');
    await host.started(1);
    first.child.kill('SIGTERM');
    assert.equal((await first.exited).code, 0, first.stderr());
    assert.deepEqual(drained(first), { running: 1, finished: 0, stopped: 1 });

    const second = await host.serve();
    try {
      await host.started(2);
      const completed = reaches(second, 'drain-stage', 'completed');
      await host.open();
      await completed;
    } finally {
      assert.equal((await second.stop()).code, 0, second.stderr());
    }
    const journal = events(host.state, 'drain-stage');
    const assignments = journal.filter((e) => e.type === 'assignment.commit');
    assert.deepEqual(
      assignments.map((e) => [e.origin, e.data.generation]),
      [
        ['external', 1],
        ['host', 2],
      ],
      'the Host assigned the stage again itself, under the next generation',
    );
    assert.deepEqual(
      journal.filter((e) => e.type === 'dispatch.intend').map((e) => e.data.clientRequestId),
      ['drain-stage/a1/g1/run', 'drain-stage/a1/g2/run'],
      'the stopped run was never sent again under its request id',
    );
    assert.deepEqual(
      journal.filter((e) => e.type === 'run.observe').map((e) => e.data.jobStatus),
      ['abandoned', 'succeeded'],
    );
    assert.equal(host.runs(), 2);
  });

  it('a stage that finishes inside --drain-timeout is observed as it ended; meanwhile every request is answered 503 draining with Retry-After', async () => {
    const host = agentHost();
    const serve = await host.serve('--drain-timeout', '600000');
    assert.equal((await http(serve.ready, 'POST', '/tasks', { body: host.spec })).status, 201);
    await assign(serve, 'drain-stage');
    await host.started(1);
    const draining = drainStarted(host.state);
    serve.child.kill('SIGTERM');
    await draining;
    // Every request but the probes (/health, /ready: docs/service.md#probes).
    for (const [method, path] of [
      ['GET', '/tasks'],
      ['GET', '/tasks/drain-stage'],
      ['POST', '/tasks'],
    ] as const) {
      const answer = await http(serve.ready, method, path, method === 'POST' ? { body: host.spec } : {});
      assert.deepEqual(
        [answer.status, answer.body.error?.code, answer.headers['retry-after']],
        [503, 'draining', '600'],
        `${method} ${path}`,
      );
    }
    await host.open();
    assert.equal((await serve.exited).code, 0, serve.stderr());
    assert.deepEqual(drained(serve), { running: 1, finished: 1, stopped: 0 });
    assert.deepEqual(
      events(host.state, 'drain-stage')
        .filter((e) => e.type === 'run.observe')
        .map((e) => [e.data.jobStatus, Object.keys(e.data.evidence)]),
      [['succeeded', ['out.json']]],
      'the run ended on its own and its evidence was kept',
    );

    // Nothing new started during the drain; the restarted Host carries the stage on to completion.
    const again = await host.serve();
    try {
      await reaches(again, 'drain-stage', 'completed');
    } finally {
      assert.equal((await again.stop()).code, 0, again.stderr());
    }
    const journal = events(host.state, 'drain-stage');
    assert.equal(journal.filter((e) => e.type === 'assignment.commit').length, 1, 'no generation was added');
    assert.equal(host.runs(), 1);
  });
});
