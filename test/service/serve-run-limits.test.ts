import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { linedAgent } from '../support/lined-agent.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';
import { CLI, http, startServe, type ServeChild } from './serve-child.js';

/** `ordivon ARGS --state STATE` as a child process: its exit and stdout. */
function ordivon(state: string, ...args: string[]): string {
  const run = spawnSync(process.execPath, [CLI, ...args, '--state', state], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

/** Resolves once the service's Task list says `taskId` is queued at `position`. */
function queuedAt(serve: ServeChild, taskId: string, position: number) {
  return until(`${taskId} queued #${position}`, 60_000, async () => {
    const rows = (await http(serve.ready, 'GET', '/tasks')).body as Array<{
      taskId: string;
      queued?: { position: number };
    }>;
    return rows.find((r) => r.taskId === taskId)?.queued?.position === position ? true : undefined;
  });
}

describe(
  'ordivon serve with concurrency.runs: queued in show, list and the page; the order survives a restart',
  { timeout: 120_000 },
  () => {
    it('shows the Tasks over the limit as queued with their place in line, and after a restart dispatches them in that order', async () => {
      const dir = tempDir('ordivon-limits-serve-');
      const state = join(dir, 'state');
      const agent = linedAgent(dir);
      const config = join(dir, 'ordivon.config.json');
      writeFileSync(config, JSON.stringify({ harnesses: { agent: agent.harness }, concurrency: { runs: 1 } }));
      const serve = () => startServe(['--state', state, '--port', '0', '--config', config, '--drain-timeout', '0']);
      const order = ['q-z', 'q-y', 'q-x'];
      const first = await serve();
      try {
        for (const id of order)
          assert.equal((await http(first.ready, 'POST', '/tasks', { body: agent.spec(id) })).status, 201);
        for (const [i, id] of order.entries()) {
          const sent = await http(first.ready, 'POST', `/tasks/${id}/events`, {
            body: { type: 'assignment.commit', harness: 'agent', purpose: 'work' },
          });
          assert.equal(sent.status, 200, sent.text);
          if (i === 0) await agent.startedCount(1);
          else await queuedAt(first, id, i);
        }

        const listed = ordivon(state, 'list');
        assert.match(listed, /^q-y +assigned\.ready \(queued #1, waiting on concurrency\.runs \(1\)\) +\d+ +1$/m);
        assert.match(listed, /^q-x +assigned\.ready \(queued #2, waiting on concurrency\.runs \(1\)\) +\d+ +1$/m);
        assert.match(listed, /^q-z +assigned\.(running|dispatching|unknown) +\d+ +1$/m);
        const rows = JSON.parse(ordivon(state, 'list', '--json')) as Array<{
          taskId: string;
          state: string;
          queued?: unknown;
        }>;
        assert.equal(rows.find((r) => r.taskId === 'q-z')!.queued, undefined, 'only a queued row has queued');
        // q-z's run started: its dispatch's answer may still be on its way (dispatching), or recorded (running).
        const holding = (state: string) =>
          /^assigned\.(dispatching|unknown|running)$/.test(state) ? 'holding' : state;
        assert.deepEqual(rows.map((r) => [r.taskId, holding(r.state), r.queued ?? null]).sort(), [
          ['q-x', 'assigned.ready', { limit: 'runs', harness: 'agent', max: 1, position: 2 }],
          ['q-y', 'assigned.ready', { limit: 'runs', harness: 'agent', max: 1, position: 1 }],
          ['q-z', 'holding', null],
        ]);
        assert.match(ordivon(state, 'show', 'q-x'), /^ {2}queued #2, waiting on concurrency\.runs \(1\)$/m);
        const shown = JSON.parse(ordivon(state, 'show', 'q-x', '--json')) as { state: string; queued: unknown };
        assert.equal(shown.state, 'assigned.ready');
        assert.deepEqual(shown.queued, { limit: 'runs', harness: 'agent', max: 1, position: 2 });
        assert.equal(JSON.parse(ordivon(state, 'show', 'q-z', '--json')).queued, null);
        // The page renders what /tasks and /tasks/:id answer.
        assert.deepEqual((await http(first.ready, 'GET', '/tasks/q-y')).body.queued, {
          limit: 'runs',
          harness: 'agent',
          max: 1,
          position: 1,
        });
        assert.match((await http(first.ready, 'GET', '/')).text, /queued #/);
      } finally {
        // q-z's run is stopped with the service (drain timeout 0): its stage's default retry dispatches it again.
        assert.equal((await first.stop()).code, 0, first.stderr());
      }

      // Nothing serves the root: no Host is dispatching, so nothing is queued (the state is unchanged).
      assert.match(ordivon(state, 'list'), /^q-x +assigned\.ready +\d+ +1$/m);
      assert.equal(JSON.parse(ordivon(state, 'show', 'q-x', '--json')).queued, null);

      const second = await serve();
      try {
        // The stopped run is dispatched again under its next generation and keeps its place in line
        // (docs/stages.md): it goes before q-y and q-x when it is ready again by the time the slot
        // frees, after them otherwise. Whichever: each starts once more, and q-y still before q-x.
        for (let started = 2; started <= 4; started++) {
          const next = (await agent.startedCount(started)).at(-1)!;
          await agent.release(next);
        }
        const starts = await agent.startedCount(4);
        assert.deepEqual([...starts.slice(1)].sort(), ['q-x', 'q-y', 'q-z']);
        assert.ok(starts.indexOf('q-y', 1) < starts.indexOf('q-x', 1), `q-y before q-x: ${starts.join(', ')}`);
        await until('every Task completed', 60_000, async () => {
          const rows = (await http(second.ready, 'GET', '/tasks')).body as Array<{ state: string }>;
          return rows.every((r) => r.state === 'completed') ? true : undefined;
        });
      } finally {
        await second.stop();
      }
    });
  },
);
