import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { CLI, eventsDigest, http, startServe, type ServeChild } from './serve-child.js';

// 127.0.0.2 is bindable without leaving the machine, yet it is not 127.0.0.1 or ::1: the
// service treats it as a non-loopback listener, exactly as it would a LAN address.
const HOST = '127.0.0.2';
const TOKEN = 'test-token-7f3a';

describe('a non-loopback listener requires a bearer token', { timeout: 60_000 }, () => {
  const state = join(tempDir(), 'state');
  let serve: ServeChild;
  before(async () => {
    serve = await startServe(['--state', state, '--host', HOST, '--port', '0', '--no-harnesses'], {
      ORDIVON_TOKEN: TOKEN,
    });
  });
  after(async () => {
    if (serve.child.exitCode === null) await serve.stop();
  });

  for (const host of [HOST, '0.0.0.0'])
    it(`refuses to start on --host ${host} without a token before it writes anything (exit 2, token_required at --host; regression: the state root was made first)`, () => {
      const bare = join(tempDir(), 'state');
      const r = spawnSync(
        process.execPath,
        [CLI, 'serve', '--state', bare, '--host', host, '--port', '0', '--no-harnesses', '--json'],
        {
          encoding: 'utf8',
          env: { ...process.env, ORDIVON_TOKEN: '' },
        },
      );
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stdout, '', 'an error prints nothing on stdout');
      // The error is stderr's last line, after the service's log lines.
      const { error } = JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!);
      assert.deepEqual([error.code, error.path], ['token_required', '--host']);
      assert.equal(existsSync(bare), false, 'no state root was made');
    });

  it('answers 401 unauthorized to a request without the token, or with a wrong one, and writes nothing', async () => {
    assert.equal(serve.ready.url, `http://${HOST}:${serve.ready.port}`);
    const good = { authorization: `Bearer ${TOKEN}` };
    assert.equal(
      (await http(serve.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'tok-1' }, headers: good })).status,
      201,
    );
    const before = await eventsDigest(serve.ready, good);
    const attempts: Array<[string, string, Record<string, string>]> = [
      ['GET', '/tasks', {}],
      ['GET', '/tasks', { authorization: 'Bearer wrong-token-0000' }],
      ['GET', `/tasks?access_token=nope`, {}],
      ['POST', '/tasks/tok-1/events', {}],
      ['POST', '/tasks/tok-1/events', { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` }],
      ['GET', '/events', {}],
      ['GET', '/', {}],
    ];
    for (const [method, path, headers] of attempts) {
      const r = await http(serve.ready, method, path, {
        headers,
        token: false,
        ...(method === 'POST' ? { body: { type: 'task.cancel', reason: 'no token' } } : {}),
      });
      assert.deepEqual(
        [r.status, r.body.error?.code],
        [401, 'unauthorized'],
        `${method} ${path} ${JSON.stringify(headers)}`,
      );
    }
    assert.equal(await eventsDigest(serve.ready, good), before);
    const withToken = await http(serve.ready, 'POST', '/tasks/tok-1/events', {
      body: { type: 'task.cancel', reason: 'with token' },
      headers: good,
    });
    assert.deepEqual([withToken.status, withToken.body.state], [200, 'cancelled']);
    const viaQuery = await http(serve.ready, 'GET', `/tasks/tok-1?access_token=${TOKEN}`, { token: false });
    assert.deepEqual(
      [viaQuery.status, viaQuery.body.state],
      [200, 'cancelled'],
      'a GET may carry the token in the query (EventSource cannot set headers)',
    );
  });

  it('the CLI routes through it with the token service.json names, ORDIVON_TOKEN set or not', () => {
    const run = (token: string) =>
      spawnSync(process.execPath, [CLI, 'list', '--state', state, '--json'], {
        encoding: 'utf8',
        env: { ...process.env, ORDIVON_TOKEN: token },
      });
    const ok = run(TOKEN);
    assert.equal(ok.status, 0, ok.stderr);
    assert.deepEqual(JSON.parse(ok.stdout), [{ taskId: 'tok-1', state: 'cancelled', revision: 2, generation: 0 }]);
    const fromFile = run('');
    assert.equal(fromFile.status, 0, fromFile.stderr);
    assert.deepEqual(JSON.parse(fromFile.stdout), JSON.parse(ok.stdout));
  });
});
