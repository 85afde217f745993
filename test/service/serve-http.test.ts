import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { CLI, eventsDigest, http, nextCommit, startServe, type ServeChild } from './serve-child.js';

const commit = { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' };

describe('ordivon serve over HTTP (a real child process on 127.0.0.1)', { timeout: 60_000 }, () => {
  const state = join(tempDir(), 'state');
  let serve: ServeChild;
  before(async () => {
    serve = await startServe(['--state', state, '--port', '0', '--no-harnesses']);
  });
  after(async () => {
    if (serve.child.exitCode === null) await serve.stop();
  });

  it('prints its port and records itself in service.json', async () => {
    assert.ok(serve.ready.port! > 0);
    assert.equal(serve.ready.url, `http://127.0.0.1:${serve.ready.port}`);
    const status = await http(serve.ready, 'GET', '/status');
    assert.deepEqual([status.status, status.body.status, status.body.pid], [200, 'serving', serve.child.pid]);
    assert.ok(existsSync(join(state, 'service.json')));
  });

  it('creates a Task, admits an event, and reports it in get, list, events and the SSE stream', async () => {
    const created = await http(serve.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'svc-1' } });
    assert.deepEqual([created.status, created.body], [201, { taskId: 'svc-1', revision: 1 }]);
    const stream = await nextCommit(serve.ready, (c) => c.taskId === 'svc-1' && c.revision === 2);
    await stream.opened;
    const sent = await http(serve.ready, 'POST', '/tasks/svc-1/events', { body: commit });
    assert.equal(sent.status, 200);
    assert.deepEqual(
      [sent.body.admitted, sent.body.written, sent.body.revision, sent.body.state],
      [true, true, 2, 'assigned.compiling'],
    );
    const streamed = await stream.commit;
    stream.close();
    assert.deepEqual(
      [streamed.type, streamed.state, streamed.origin, streamed.admitted],
      ['assignment.commit', 'assigned.compiling', 'external', true],
    );

    const task = await http(serve.ready, 'GET', '/tasks/svc-1');
    assert.deepEqual(
      [task.status, task.body.state, task.body.revision, task.body.context.generation, task.body.title],
      [200, 'assigned.compiling', 2, 1, SPEC.title],
    );
    const list = await http(serve.ready, 'GET', '/tasks');
    assert.deepEqual(
      list.body.map((t: any) => [t.taskId, t.state, t.revision, t.generation]),
      [['svc-1', 'assigned.compiling', 2, 1]],
    );
    const events = await http(serve.ready, 'GET', '/tasks/svc-1/events');
    assert.deepEqual(
      events.body.events.map((e: any) => [e.revision, e.type, e.origin]),
      [
        [1, 'task.created', 'host'],
        [2, 'assignment.commit', 'external'],
      ],
    );
  });

  it('answers a retried eventId with its first revision and writes nothing', async () => {
    const first = await http(serve.ready, 'POST', '/tasks/svc-1/events', {
      body: { type: 'completion.propose', generation: 1, eventId: 'early-claim' },
    });
    assert.deepEqual(
      [first.status, first.body.written, first.body.admitted],
      [409, false, false],
      'the compiling state does not take a proposal',
    );
    const before = await eventsDigest(serve.ready);
    const spec2 = await http(serve.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'svc-2' } });
    assert.equal(spec2.status, 201);
    const a = await http(serve.ready, 'POST', '/tasks/svc-2/events', { body: { ...commit, eventId: 'once' } });
    const mid = await eventsDigest(serve.ready);
    const b = await http(serve.ready, 'POST', '/tasks/svc-2/events', { body: { ...commit, eventId: 'once' } });
    assert.deepEqual([a.status, a.body.written, a.body.revision], [200, true, 2]);
    assert.deepEqual([b.status, b.body.written, b.body.duplicate, b.body.revision], [200, false, true, 2]);
    assert.equal(await eventsDigest(serve.ready), mid);
    assert.notEqual(mid, before);
  });

  it('refuses malformed and disallowed requests with a status and code, writing nothing', async () => {
    const before = await eventsDigest(serve.ready);
    const json = { 'content-type': 'application/json' };
    const cases: Array<
      [string, string, { body?: unknown; headers?: Record<string, string> }, number, string, string?]
    > = [
      ['POST', '/tasks/svc-1/events', { body: '{not json', headers: json }, 400, 'invalid_json'],
      [
        'POST',
        '/tasks/svc-1/events',
        { body: JSON.stringify(commit), headers: { 'content-type': 'text/plain' } },
        415,
        'unsupported_media_type',
      ],
      [
        'POST',
        '/tasks/svc-1/events',
        { body: { type: 'completion.propose', generation: 0 } },
        400,
        'invalid_event',
        'generation',
      ],
      ['POST', '/tasks/svc-1/events', { body: { type: 'no.such.event' } }, 400, 'invalid_event', 'type'],
      // An unknown key is refused at its own path, not dropped (nothing written).
      [
        'POST',
        '/tasks/svc-1/events',
        { body: { type: 'task.cancel', reason: 'x', reasn: 'y' } },
        400,
        'invalid_event',
        'reasn',
      ],
      ['POST', '/tasks', { body: { ...SPEC, taskId: 'svc-typo', lables: {} } }, 400, 'invalid_spec', 'lables'],
      ['POST', '/tasks', { body: { workload: 'hamilton-v1', taskid: 'x' } }, 400, 'invalid_spec', 'taskid'],
      ['POST', '/tasks/svc-1/events', { body: [1, 2] }, 400, 'invalid_event'],
      [
        'POST',
        '/tasks/svc-1/events',
        { body: { type: 'dispatch.ack', clientRequestId: 'x', jobId: 'y' } },
        403,
        'not_allowed',
      ],
      ['POST', '/tasks/svc-1/events', { body: { ...commit, generation: 5 } }, 409, 'generation_mismatch'],
      ['POST', '/tasks/nobody/events', { body: commit }, 404, 'task_not_found'],
      ['POST', '/tasks/bad%20id/events', { body: commit }, 400, 'invalid_request'],
      [
        'POST',
        '/tasks',
        { body: { ...SPEC, requiredArtifacts: [{ name: 'x.json', schema: { type: 'objekt' } }] } },
        400,
        'invalid_spec',
        'requiredArtifacts.0.schema',
      ],
      ['POST', '/tasks', { body: { ...SPEC, taskId: 'svc-1' } }, 409, 'task_exists'],
      ['POST', '/tasks', { body: { workload: 'nope' } }, 400, 'invalid_spec', 'workload'],
      ['POST', '/tasks', { body: 'x'.repeat((1 << 20) + 10), headers: json }, 413, 'body_too_large'],
      ['GET', '/tasks/nobody', {}, 404, 'task_not_found'],
      ['GET', '/tasks/svc-1?events=maybe', {}, 400, 'invalid_request', 'events'],
      ['DELETE', '/tasks/svc-1', {}, 405, 'method_not_allowed'],
      ['GET', '/nowhere', {}, 404, 'route_not_found'],
      ['GET', '/tasks', { headers: { host: 'attacker.example:80' } }, 403, 'forbidden_host'],
    ];
    for (const [method, path, options, status, code, field] of cases) {
      const r = await http(serve.ready, method, path, options);
      const label = `${method} ${path} ${JSON.stringify(options.body ?? '').slice(0, 60)}`;
      assert.equal(r.status, status, `${label}: ${r.text.slice(0, 300)}`);
      const got = r.body.error ?? r.body;
      assert.equal(got.code, code, label);
      if (field) assert.equal(got.path, field, label);
    }
    assert.equal(await eventsDigest(serve.ready), before);
  });

  it('drains on SIGTERM and exits 0; the store then opens without it', async () => {
    const { code, signal } = await serve.stop();
    assert.deepEqual([code, signal], [0, null], serve.stderr());
    assert.equal(existsSync(join(state, 'service.json')), false);
    assert.equal(existsSync(join(state, 'state.lock')), false);
    const shown = spawnSync(process.execPath, [CLI, 'show', 'svc-2', '--state', state, '--json'], { encoding: 'utf8' });
    assert.equal(shown.status, 0, shown.stderr);
    assert.deepEqual([JSON.parse(shown.stdout).state, JSON.parse(shown.stdout).revision], ['assigned.compiling', 2]);
  });
});
