import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { http, startServe, tokenOf, type ServeChild } from './serve-child.js';

/** Whether `nobody` exists and this process (root) can switch to it. */
function unprivilegedAccount(): boolean {
  if (process.getuid?.() !== 0) return false;
  return spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'true']).status === 0;
}

describe('ordivon serve on loopback TCP is authenticated by default', { timeout: 60_000 }, () => {
  const dir = tempDir();
  const state = join(dir, 'state');
  let serve: ServeChild;
  let token: string;
  before(async () => {
    serve = await startServe(['--state', state, '--port', '0', '--no-harnesses'], { ORDIVON_TOKEN: '' });
    token = tokenOf(serve.ready)!;
  });
  after(async () => {
    if (serve.child.exitCode === null) await serve.stop();
  });

  it('generates a token, writes it to the 0600 service.json only, and refuses requests without it', async () => {
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(statSync(join(state, 'service.json')).mode & 0o777, 0o600);
    assert.equal(JSON.stringify(serve.ready).includes(token), false, 'the ready line does not carry the token');
    assert.equal(serve.stderr().includes(token), false, 'stderr does not carry the token');
    for (const [method, path] of [
      ['GET', '/tasks'],
      ['POST', '/tasks'],
      ['GET', '/'],
      ['GET', '/metrics'],
      ['GET', '/events'],
    ] as const) {
      const r = await http(serve.ready, method, path, {
        token: false,
        ...(method === 'POST' ? { body: { ...SPEC, taskId: 'anon-1' } } : {}),
      });
      assert.deepEqual([r.status, r.body.error?.code], [401, 'unauthorized'], `${method} ${path}`);
    }
    assert.equal((await http(serve.ready, 'GET', '/tasks')).status, 200, 'with the token from service.json');
  });

  it('refuses an unprivileged local user: 401 without the token, EACCES on service.json', (t) => {
    if (!unprivilegedAccount()) {
      // Under CI the test must run: an environment without the account is a failure, not a skip.
      assert.notEqual(process.env.CI, 'true', 'CI=true needs root and the nobody account (setpriv)');
      t.skip('no unprivileged account to switch to');
      return;
    }
    // Only the file's own mode may stop the other user (not a directory it cannot enter).
    for (const d of [dir, state]) chmodSync(d, 0o755);
    const script = `
      const { readFileSync } = require('node:fs');
      let read = 'readable';
      try { readFileSync(${JSON.stringify(join(state, 'service.json'))}); } catch (e) { read = e.code; }
      const url = ${JSON.stringify(serve.ready.url)};
      (async () => {
        const get = (await fetch(url + '/tasks')).status;
        const post = (await fetch(url + '/tasks', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(${JSON.stringify({ ...SPEC, taskId: 'by-nobody' })}),
        })).status;
        console.log(JSON.stringify({ uid: process.getuid(), read, get, post }));
      })();`;
    const r = spawnSync(
      'setpriv',
      ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '-e', script],
      { encoding: 'utf8', cwd: '/' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { uid: 65534, read: 'EACCES', get: 401, post: 401 });
  });

  it('exchanges the one-time login URL for an HttpOnly SameSite=Strict cookie, once', async () => {
    const login = new URL(serve.ready.login!);
    assert.equal(login.pathname, '/login');
    const code = login.searchParams.get('token')!;
    assert.notEqual(code, token, 'the login code is not the bearer token');
    const wrong = await http(serve.ready, 'GET', `/login?token=${code.slice(1)}x`, { token: false });
    assert.deepEqual([wrong.status, wrong.body.error?.code], [401, 'unauthorized']);
    const first = await http(serve.ready, 'GET', `/login?token=${code}`, { token: false });
    assert.equal(first.status, 303);
    assert.equal(first.headers.location, '/');
    const cookie = String(first.headers['set-cookie']);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Strict/);
    assert.equal(cookie.includes(token), false, 'the cookie is a session, not the token');
    const session = cookie.split(';')[0]!;
    const page = await http(serve.ready, 'GET', '/', { token: false, headers: { cookie: session } });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
    const tasks = await http(serve.ready, 'GET', '/tasks', { token: false, headers: { cookie: session } });
    assert.equal(tasks.status, 200);
    const again = await http(serve.ready, 'GET', `/login?token=${code}`, { token: false });
    assert.deepEqual([again.status, again.body.error?.code], [401, 'unauthorized'], 'a used code is refused');
    const forged = await http(serve.ready, 'GET', '/tasks', { token: false, headers: { cookie: `${session}x` } });
    assert.equal(forged.status, 401);

    // With the token, a new login URL (for another browser) works once too.
    const fresh = await http(serve.ready, 'POST', '/login');
    assert.equal(fresh.status, 201);
    const next = new URL(fresh.body.login as string);
    assert.equal((await http(serve.ready, 'GET', `${next.pathname}${next.search}`, { token: false })).status, 303);
  });

  it("sends frame-ancestors 'none' on every response, refusals included, and echoes X-Request-Id", async () => {
    for (const [path, useToken] of [
      ['/health', true],
      ['/tasks', false],
      ['/nowhere', true],
    ] as const) {
      const r = await http(serve.ready, 'GET', path, { token: useToken, headers: { 'x-request-id': 'req-abc.1' } });
      assert.match(String(r.headers['content-security-policy']), /frame-ancestors 'none'/, path);
      assert.equal(r.headers['x-request-id'], 'req-abc.1', path);
    }
    const generated = await http(serve.ready, 'GET', '/health');
    assert.match(String(generated.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('keeps the Host-header check: the token under a foreign Host name is 403 forbidden_host', async () => {
    const r = await http(serve.ready, 'GET', '/tasks', { headers: { host: 'evil.example:80' } });
    assert.deepEqual([r.status, r.body.error?.code], [403, 'forbidden_host']);
  });

  it('service.json says a token is required and names it', () => {
    const file = JSON.parse(readFileSync(join(state, 'service.json'), 'utf8')) as Record<string, unknown>;
    assert.deepEqual([file.tokenRequired, file.token], [true, token]);
  });
});
