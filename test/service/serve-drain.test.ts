import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { watch } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { CLI, http, startServe, tokenOf } from './serve-child.js';

describe('ordivon serve drains on SIGTERM', { timeout: 60_000 }, () => {
  it('answers and commits a request already in flight, refuses new work, and exits 0', async () => {
    const state = join(tempDir(), 'state');
    const serve = await startServe(['--state', state, '--port', '0', '--no-harnesses']);
    assert.equal((await http(serve.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'drain-1' } })).status, 201);

    // A request whose headers have arrived but whose body has not: in flight when SIGTERM lands.
    const body = JSON.stringify({ type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
    const url = new URL(serve.ready.url);
    let inflight!: ReturnType<typeof request>;
    const answered = new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request(
        {
          method: 'POST',
          hostname: url.hostname,
          port: url.port,
          path: '/tasks/drain-1/events',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            authorization: `Bearer ${tokenOf(serve.ready)}`,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.flushHeaders();
      inflight = req;
    });
    // The health answer proves the service has parsed requests after the in-flight one's headers.
    assert.equal((await http(serve.ready, 'GET', '/health')).status, 200);

    // The service removes service.json as the first step of draining: wait for that, without polling.
    const draining = new Promise<void>((resolve) => {
      const watcher = watch(state, (_event, name) => {
        if (name === 'service.json') {
          watcher.close();
          resolve();
        }
      });
    });
    serve.child.kill('SIGTERM');
    await draining;
    // The listener stays open until the request in flight has answered: a new one is told to retry.
    const late = await http(serve.ready, 'GET', '/tasks');
    assert.deepEqual([late.status, late.body.error?.code, late.headers['retry-after']], [503, 'draining', '30']);
    inflight.end(body);
    const result = await answered;
    assert.deepEqual([result.status, result.body.admitted, result.body.revision], [200, true, 2]);
    const { code } = await serve.exited;
    assert.equal(code, 0, serve.stderr());

    const shown = spawnSync(process.execPath, [CLI, 'show', 'drain-1', '--events', '--state', state, '--json'], {
      encoding: 'utf8',
    });
    assert.deepEqual(
      JSON.parse(shown.stdout).events.map((e: any) => e.type),
      ['task.created', 'assignment.commit'],
      'the in-flight transition committed',
    );
  });
});
