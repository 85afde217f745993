import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { http, startServe } from '../service/serve-child.js';

const SCRIPT = fileURLToPath(new URL('../../examples/task-events.js', import.meta.url));

describe(
  'examples/task-events: scripts that send events to Task actors through the service',
  { timeout: 60_000 },
  () => {
    it("reassigns, proposes and cancels; each answer is the actor's, with its code", async () => {
      const state = join(tempDir(), 'state');
      const script = (...args: string[]) => {
        const r = spawnSync(process.execPath, [SCRIPT, ...args, '--state', state], { encoding: 'utf8' });
        return { status: r.status, body: JSON.parse(r.stdout.trim().split('\n').at(-1)!) };
      };
      assert.equal(script('cancel', 'x', '--reason', 'y').body.code, 'service_not_running');
      const serve = await startServe(['--state', state, '--port', '0', '--no-harnesses']);
      try {
        await http(serve.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'ev-1' } });
        await http(serve.ready, 'POST', '/tasks/ev-1/events', {
          body: { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' },
        });

        const reassigned = script('reassign', 'ev-1');
        assert.equal(reassigned.status, 0);
        assert.deepEqual(
          [reassigned.body.event.harness, reassigned.body.event.generation, reassigned.body.state],
          ['hermes', 2, 'assigned.compiling'],
        );

        const stale = script('propose', 'ev-1', '--generation', '1');
        assert.deepEqual(
          [stale.status, stale.body.written, stale.body.code],
          [1, true, 'stale_assignment'],
          'retained, not acted upon',
        );
        const early = script('propose', 'ev-1');
        assert.deepEqual(
          [early.status, early.body.written, early.body.code],
          [1, false, 'invalid_transition'],
          'compiling does not take a current proposal',
        );

        const cancelled = script('cancel', 'ev-1', '--reason', 'no longer needed');
        assert.deepEqual([cancelled.status, cancelled.body.state], [0, 'cancelled']);
        const again = script('cancel', 'ev-1', '--reason', 'twice');
        assert.deepEqual([again.status, again.body.code], [1, 'invalid_transition']);
        assert.equal(script('reassign', 'nobody').body.code, 'task_not_found');
      } finally {
        assert.equal((await serve.stop()).code, 0);
      }
    });
  },
);
