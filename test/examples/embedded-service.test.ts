import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/temp.js';
import { CLI, http } from '../service/serve-child.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/embedded-service.js', import.meta.url));

describe('examples/embedded-service', { timeout: 60_000 }, () => {
  it('runs as its own process, takes work on its one route, and drains on SIGTERM', async () => {
    const state = join(tempDir(), 'state');
    const child = spawn(process.execPath, [EXAMPLE, '--state', state, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    process.once('exit', () => child.kill('SIGKILL'));
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      void exited.then((code) => reject(new Error(`example exited ${code}: ${stderr}`)));
    });
    const { url } = JSON.parse(line).listening as { url: string };

    const made = await http({ url }, 'POST', '/repairs', { body: { title: 'Fix the rounding bug', harness: 'codex' } });
    assert.equal(made.status, 201, made.text);
    assert.deepEqual([made.body.admitted, made.body.revision, made.body.state], [true, 2, 'assigned.compiling']);
    const bad = await http({ url }, 'POST', '/repairs', { body: { title: 'x', harness: 'gpt' } });
    assert.deepEqual([bad.status, bad.body.error.code, bad.body.error.path], [400, 'invalid_request', 'harness']);
    const other = await http({ url }, 'GET', '/tasks');
    assert.equal(other.status, 404, 'the example exposes only its own route');

    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    const listed = spawnSync(process.execPath, [CLI, 'list', '--state', state, '--json'], { encoding: 'utf8' });
    const rows = JSON.parse(listed.stdout) as Array<{ taskId: string; state: string; revision: number }>;
    assert.deepEqual(
      rows.map((r) => [r.taskId, r.state, r.revision]),
      [[made.body.taskId, 'assigned.compiling', 2]],
      'exactly one Task: the refused request wrote nothing',
    );
  });
});
