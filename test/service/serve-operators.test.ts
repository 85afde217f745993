import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSupervisor } from '../../kernel/supervisor.js';
import { startService } from '../../cli/service/start-service.js';
import { operatorRequest } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { CLI, http, startServe, type ServeChild } from './serve-child.js';

describe(
  'ordivon serve for operators: probes, process metrics, the CLI through the service, login',
  { timeout: 90_000 },
  () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    let serve: ServeChild;
    before(async () => {
      serve = await startServe(['--state', state, '--port', '0', '--no-harnesses']);
    });
    after(async () => {
      if (serve.child.exitCode === null) await serve.stop();
    });

    const ordivon = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, ...args, '--state', state, '--json'], { encoding: 'utf8' });

    it('answers GET /health and GET /ready without the token, saying nothing else (regression: /health needed the token)', async () => {
      const health = await http(serve.ready, 'GET', '/health', { token: false });
      assert.deepEqual([health.status, health.body], [200, { status: 'ok' }]);
      const ready = await http(serve.ready, 'GET', '/ready', { token: false });
      assert.deepEqual([ready.status, ready.body], [200, { status: 'ready' }]);
      const posted = await http(serve.ready, 'POST', '/ready', { token: false, body: {} });
      assert.deepEqual([posted.status, posted.body.error?.code], [405, 'method_not_allowed']);
    });

    it('answers GET /status only with the token: the supervisor state, readiness and the rest', async () => {
      const refused = await http(serve.ready, 'GET', '/status', { token: false });
      assert.deepEqual([refused.status, refused.body.error?.code], [401, 'unauthorized']);
      const status = await http(serve.ready, 'GET', '/status');
      assert.equal(status.status, 200, status.text);
      assert.deepEqual(
        [status.body.status, status.body.ready, status.body.database, status.body.pid, status.body.hostId],
        ['serving', { status: 'ready' }, null, serve.child.pid, null],
      );
    });

    it("answers prom-client's default process metrics on /metrics beside its own", async () => {
      const metrics = await http(serve.ready, 'GET', '/metrics');
      assert.equal(metrics.status, 200);
      for (const name of [
        'process_cpu_user_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_heap_size_used_bytes',
        'nodejs_eventloop_lag_seconds',
        'ordivon_admissions_total',
      ])
        assert.match(metrics.text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    });

    it('takes task create, request open, decide and send (a cancel) through the running service (regression: task create answered state_locked)', () => {
      const spec = join(dir, 'spec.json');
      writeFileSync(spec, JSON.stringify({ ...SPEC, taskId: 'via-svc' }));
      const steps: Array<[string[], (out: any) => unknown, unknown]> = [
        [['task', 'create', '--spec', spec], (o) => [o.taskId, o.revision], ['via-svc', 1]],
        [
          ['request', 'open', 'via-svc', JSON.stringify(operatorRequest('q-1'))],
          (o) => [o.admitted, o.revision],
          [true, 2],
        ],
        [['decide', 'via-svc', 'q-1', '--answer', 'ship'], (o) => [o.admitted, o.revision], [true, 3]],
        [
          ['send', 'via-svc', JSON.stringify({ type: 'task.cancel', reason: 'done here' })],
          (o) => [o.admitted, o.state],
          [true, 'cancelled'],
        ],
      ];
      for (const [args, pick, expected] of steps) {
        const r = ordivon(...args);
        assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
        assert.deepEqual(pick(JSON.parse(r.stdout)), expected, args.join(' '));
      }
      const again = ordivon('task', 'create', '--spec', spec);
      assert.deepEqual(
        [again.status, JSON.parse(again.stderr.trimEnd().split('\n').at(-1)!).error.code],
        [1, 'task_exists'],
      );
    });

    it('reads the Task the CLI created from the service itself', async () => {
      const events = await http(serve.ready, 'GET', '/tasks/via-svc/events');
      assert.deepEqual(
        events.body.events.map((e: any) => e.type),
        ['task.created', 'request.open', 'request.answer', 'task.cancel'],
      );
    });

    it('ordivon login prints a new one-time page URL that opens a session once', async () => {
      const urls: string[] = [];
      for (const json of [true, false]) {
        const r = spawnSync(process.execPath, [CLI, 'login', '--state', state, ...(json ? ['--json'] : [])], {
          encoding: 'utf8',
        });
        assert.equal(r.status, 0, r.stderr);
        urls.push(json ? JSON.parse(r.stdout).login : r.stdout.trim());
      }
      assert.notEqual(urls[0], urls[1], 'each login is a new code');
      for (const login of urls) {
        const url = new URL(login);
        assert.equal(url.origin, serve.ready.url);
        const path = `${url.pathname}${url.search}`;
        const first = await http(serve.ready, 'GET', path, { token: false });
        assert.equal(first.status, 303);
        assert.match(String(first.headers['set-cookie']), /HttpOnly; SameSite=Strict/);
        assert.equal((await http(serve.ready, 'GET', path, { token: false })).status, 401, 'the code works once');
      }
    });

    it('ordivon login without a running service is service_not_running (exit 1)', () => {
      const r = spawnSync(process.execPath, [CLI, 'login', '--state', join(dir, 'nothing'), '--json'], {
        encoding: 'utf8',
      });
      assert.equal(r.status, 1);
      assert.equal(JSON.parse(r.stderr.trimEnd()).error.code, 'service_not_running');
    });
  },
);

describe('GET /ready of a draining service', () => {
  it('answers 503 draining while /health still answers 200', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    const service = await startService({ supervisor: sup, listener: { kind: 'tcp', host: '127.0.0.1', port: 0 } });
    try {
      const target = { url: service.url, token: service.token };
      assert.equal((await http(target, 'GET', '/ready', { token: false })).status, 200);
      const drained = service.api.drain();
      const ready = await http(target, 'GET', '/ready', { token: false });
      assert.deepEqual([ready.status, ready.body], [503, { status: 'not_ready', reason: 'draining' }]);
      assert.equal((await http(target, 'GET', '/health', { token: false })).status, 200);
      await drained;
    } finally {
      await service.close();
      await sup.stop();
    }
  });
});

describe('a write command waiting for the lock', () => {
  it('goes through a service that started on the root after the command did, found first or at a later try of the lock (regression: task create answered state_locked)', async () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    const sup = createSupervisor({ state });
    await sup.start();
    const spec = join(dir, 'spec.json');
    writeFileSync(spec, JSON.stringify({ ...SPEC, taskId: 'late-svc' }));
    try {
      // This process holds the lock and serves nothing yet: the command may find only the lock.
      const child = spawn(process.execPath, [CLI, 'task', 'create', '--spec', spec, '--state', state, '--json'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      // Its service.json names this process, the lock's holder: the next try of the lock finds it.
      const service = await startService({ supervisor: sup, listener: { kind: 'socket', path: join(dir, 's.sock') } });
      try {
        assert.equal(await exited, 0, err);
        assert.deepEqual(JSON.parse(out), { taskId: 'late-svc', revision: 1 });
        assert.equal(sup.getTask('late-svc')?.revision, 1, 'created by the service');
      } finally {
        await service.close();
      }
    } finally {
      await sup.stop();
    }
  });
});
