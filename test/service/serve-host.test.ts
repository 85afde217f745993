import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../support/temp.js';
import { http, startServe } from './serve-child.js';

describe('ordivon serve --demo-harnesses (the scripted demo harnesses)', { timeout: 60_000 }, () => {
  it("opens the full Host, creates the demo workload's Task by name, and drains to exit 0", async () => {
    const state = join(tempDir(), 'state');
    const serve = await startServe(['--state', state, '--port', '0', '--demo-harnesses']);
    try {
      assert.match(String(serve.ready.harnesses), /^scripted \(codex, hermes/);
      const created = await http(serve.ready, 'POST', '/tasks', { body: { workload: 'hamilton-v1', taskId: 'wl-1' } });
      assert.deepEqual([created.status, created.body.taskId], [201, 'wl-1']);
      const task = await http(serve.ready, 'GET', '/tasks/wl-1');
      assert.deepEqual(
        [task.body.state, task.body.context.requiredArtifacts],
        ['open', ['completion.json', 'diagnosis.json']],
      );
      assert.ok(existsSync(join(state, 'runtime')), 'the Runtime opened its own LMDB under the state root');
    } finally {
      assert.equal((await serve.stop()).code, 0, serve.stderr());
    }
  });
});
