import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { ordivonSync } from '../support/cli-sync.js';
import { CLI, eventsDigest, http, startServe, type ServeChild } from './serve-child.js';

const ordivon = (...args: string[]) => ordivonSync(args);

describe('ordivon serve on a unix socket, with the CLI routed through it', { timeout: 60_000 }, () => {
  const dir = tempDir();
  const state = join(dir, 'state');
  const socket = join(dir, 'ordivon.sock');
  let serve: ServeChild;
  before(async () => {
    serve = await startServe(['--state', state, '--socket', socket, '--no-harnesses']);
  });
  after(async () => {
    if (serve.child.exitCode === null) await serve.stop();
  });

  it('listens on the socket with mode 0600', async () => {
    assert.equal(serve.ready.socket, socket);
    assert.ok(statSync(socket).isSocket());
    assert.equal(statSync(socket).mode & 0o777, 0o600);
    const status = await http(serve.ready, 'GET', '/status');
    assert.deepEqual([status.status, status.body.status], [200, 'serving']);
  });

  it('creates a Task and takes events over the socket; malformed ones are refused without a write', async () => {
    assert.equal((await http(serve.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'sock-1' } })).status, 201);
    const before = await eventsDigest(serve.ready);
    const bad = await http(serve.ready, 'POST', '/tasks/sock-1/events', {
      body: { type: 'assignment.commit', harness: '', purpose: 'diagnose' },
    });
    assert.deepEqual(
      [bad.status, bad.body.code, bad.body.path, bad.body.written],
      [400, 'invalid_event', 'harness', false],
    );
    const notJson = await http(serve.ready, 'POST', '/tasks/sock-1/events', {
      body: '{"type":',
      headers: { 'content-type': 'application/json' },
    });
    assert.deepEqual([notJson.status, notJson.body.error.code], [400, 'invalid_json']);
    assert.equal(await eventsDigest(serve.ready), before);
  });

  it('`ordivon send`, `show` and `list` talk to the service that holds the state root', async () => {
    // Opening the store would fail `state_locked`: the answers below can only come from the service.
    const sent = ordivon(
      'send',
      'sock-1',
      '{"type":"assignment.commit","harness":"hermes","purpose":"diagnose"}',
      '--state',
      state,
      '--json',
    );
    assert.equal(sent.status, 0, sent.stderr);
    assert.deepEqual(
      [sent.json().taskId, sent.json().revision, sent.json().state],
      ['sock-1', 2, 'assigned.compiling'],
    );
    const refused = ordivon(
      'send',
      'sock-1',
      '{"type":"verification.record","generation":1,"passed":true}',
      '--state',
      state,
      '--json',
    );
    assert.equal(refused.status, 2, 'an invalid event exits 2, as without a service');
    assert.equal(refused.error().code, 'invalid_event');
    const hostOnly = ordivon(
      'send',
      'sock-1',
      '{"type":"dispatch.lost","clientRequestId":"x"}',
      '--state',
      state,
      '--json',
    );
    assert.deepEqual([hostOnly.status, hostOnly.stdout, hostOnly.error().code], [1, '', 'not_allowed']);
    const missing = ordivon('show', 'nobody', '--state', state, '--json');
    assert.deepEqual([missing.status, missing.error().code], [1, 'task_not_found']);

    const shown = ordivon('show', 'sock-1', '--events', '--state', state, '--json');
    assert.equal(shown.status, 0, shown.stderr);
    const api = await http(serve.ready, 'GET', '/tasks/sock-1?events=1');
    // The CLI adds the Attempt's workspace path under its state root; the rest is the service's view.
    const { workspace, ...view } = shown.json();
    assert.deepEqual(view, api.body);
    assert.equal(workspace, join(state, 'workspaces', 'sock-1', 'attempt-1'));
    assert.deepEqual(
      shown.json().events.map((e: any) => e.type),
      ['task.created', 'assignment.commit'],
    );
    assert.deepEqual(ordivon('list', '--state', state, '--json').json(), [
      { taskId: 'sock-1', state: 'assigned.compiling', revision: 2, generation: 1 },
    ]);
    const human = ordivon('show', 'sock-1', '--state', state);
    assert.match(human.stdout, /sock-1 {2}assigned\.compiling {2}revision 2 {2}generation 1/);
  });

  it('drains on SIGTERM, exits 0 and removes its socket; the CLI then opens the store itself', async () => {
    const { code } = await serve.stop();
    assert.equal(code, 0, serve.stderr());
    assert.equal(existsSync(socket), false);
    assert.equal(existsSync(join(state, 'service.json')), false);
    const listed = ordivon('list', '--state', state, '--json');
    assert.deepEqual(listed.json(), [{ taskId: 'sock-1', state: 'assigned.compiling', revision: 2, generation: 1 }]);
  });
});

describe('ordivon serve refuses to share a state root', { timeout: 30_000 }, () => {
  it('a second service on a held state root exits 1 with state_locked', async () => {
    const state = join(tempDir(), 'state');
    const first = await startServe(['--state', state, '--port', '0', '--no-harnesses']);
    try {
      const second = spawn(
        process.execPath,
        [CLI, 'serve', '--state', state, '--port', '0', '--no-harnesses', '--json'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      second.stdout.on('data', (c: Buffer) => (out += c));
      second.stderr.on('data', (c: Buffer) => (err += c));
      // 'close', not 'exit': the streams are fully read only once they close.
      const code = await new Promise<number | null>((resolve) => second.once('close', resolve));
      assert.equal(code, 1);
      assert.equal(out, '', 'an error prints nothing on stdout');
      // The error is stderr's last line, after the service's log lines.
      assert.equal(JSON.parse(err.trimEnd().split('\n').at(-1)!).error.code, 'state_locked');
    } finally {
      assert.equal((await first.stop()).code, 0);
    }
  });
});
