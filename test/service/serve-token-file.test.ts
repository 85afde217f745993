import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../support/temp.js';
import { CLI, http, startServe, type ServeChild } from './serve-child.js';

const TOKEN = 'file-token-5c81d0e2';

/** A token file holding `text`, mode `mode`. */
function tokenFile(text: string, mode: number): string {
  const path = join(tempDir(), 'token');
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

/** The command line of `pid` as every local account reads it. */
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');

/** `ordivon serve ARGS` run to its end (it refuses to start): exit code, streams, the `--json` error. */
function refusedServe(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'serve', '--json', '--no-harnesses', '--port', '0', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ORDIVON_TOKEN: '' },
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, error: JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!).error };
}

describe('ordivon serve --token-file', { timeout: 60_000 }, () => {
  const state = join(tempDir(), 'state');
  let serve: ServeChild;
  before(async () => {
    serve = await startServe(
      ['--state', state, '--port', '0', '--no-harnesses', '--token-file', tokenFile(`  ${TOKEN}\n`, 0o600)],
      { ORDIVON_TOKEN: '' },
    );
  });
  after(async () => {
    if (serve.child.exitCode === null) await serve.stop();
  });

  it('requires the token the file holds (trimmed), which is not on its command line and draws no warning', async () => {
    const file = JSON.parse(readFileSync(join(state, 'service.json'), 'utf8')) as { token: string };
    assert.equal(file.token, TOKEN);
    const bearer = { authorization: `Bearer ${TOKEN}` };
    assert.equal((await http(serve.ready, 'GET', '/tasks', { headers: bearer, token: false })).status, 200);
    assert.equal((await http(serve.ready, 'GET', '/tasks', { token: false })).status, 401);
    assert.equal(cmdline(serve.ready.pid).includes(TOKEN), false, cmdline(serve.ready.pid));
    assert.match(cmdline(serve.ready.pid), / --token-file /);
    assert.doesNotMatch(serve.stderr(), /visible to every local account/);
  });

  it('refuses a token file other accounts may read or write: token_file_shared (exit 2), nothing opened', () => {
    for (const mode of [0o644, 0o640, 0o604, 0o620]) {
      const bare = join(tempDir(), 'state');
      const path = tokenFile(TOKEN, mode);
      const r = refusedServe(['--state', bare, '--token-file', path]);
      const shown = `0${mode.toString(8)}`;
      assert.equal(r.status, 2, `${shown}: ${JSON.stringify(r.error)}`);
      assert.equal(r.stdout, '');
      assert.deepEqual([r.error.code, r.error.path], ['token_file_shared', '--token-file']);
      assert.match(r.error.message, new RegExp(`${path} has mode ${shown}`));
      assert.match(r.error.message, new RegExp(`chmod 600 ${path}`));
      assert.equal(existsSync(bare), false, 'the state root was not created');
    }
  });

  it('refuses a token file that cannot be read or holds no token, and both flags at once (exit 2)', () => {
    const bare = join(tempDir(), 'state');
    for (const [path, why] of [
      [join(tempDir(), 'absent'), /cannot be read/],
      [tokenFile(' \n', 0o600), /holds no token/],
      [tokenFile('two words\n', 0o600), /more than one word/],
      [tempDir(), /not a regular file/],
    ] as const) {
      const r = refusedServe(['--state', bare, '--token-file', path]);
      assert.equal(r.status, 2, JSON.stringify(r.error));
      assert.deepEqual([r.error.code, r.error.path], ['token_file_invalid', '--token-file']);
      assert.match(r.error.message, why);
    }
    const both = refusedServe(['--state', bare, '--token-file', tokenFile(TOKEN, 0o600), '--token', TOKEN]);
    assert.deepEqual([both.status, both.error.code], [2, 'usage']);
    assert.equal(existsSync(bare), false, 'the state root was not created');
  });
});

describe('ordivon serve --token', { timeout: 60_000 }, () => {
  const token = 'flag-token-9d2e4b61';

  it('still works, and warns on stderr that the token is in ps for every local account', async () => {
    const state = join(tempDir(), 'state');
    const serve = await startServe(['--state', state, '--port', '0', '--no-harnesses', '--token', token], {
      ORDIVON_TOKEN: '',
    });
    try {
      const bearer = { authorization: `Bearer ${token}` };
      assert.equal((await http(serve.ready, 'GET', '/tasks', { headers: bearer, token: false })).status, 200);
      assert.ok(cmdline(serve.ready.pid).includes(token), 'what the warning is about');
      // With --json the warning is a log line (JSON, level 40 warn) like every other on stderr.
      const warning = serve
        .stderr()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .find((line) => /visible to every local account in ps/.test(line.msg));
      assert.ok(warning, serve.stderr());
      assert.equal(warning.level, 40);
      assert.match(warning.msg, /--token-file PATH/);
      assert.match(warning.msg, /ORDIVON_TOKEN/);
    } finally {
      await serve.stop();
    }
  });

  it('without --json, says so in a line of its own before it listens', async () => {
    const state = join(tempDir(), 'state');
    const child = spawn(
      process.execPath,
      [CLI, 'serve', '--state', state, '--port', '0', '--no-harnesses', '--token', token],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, ORDIVON_TOKEN: '' },
      },
    );
    const kill = () => child.kill('SIGKILL');
    process.once('exit', kill);
    const lines: string[] = [];
    try {
      for await (const line of createInterface({ input: child.stderr })) {
        lines.push(line);
        if (line.startsWith('ordivon serve: http://')) break;
      }
    } finally {
      child.kill('SIGTERM');
      process.off('exit', kill);
    }
    const warning = lines.find((line) => line.startsWith('ordivon serve: warning: '));
    assert.ok(warning, lines.join('\n'));
    assert.match(warning, /--token is visible to every local account in ps \(\/proc\/<pid>\/cmdline\)/);
    assert.match(warning, /--token-file PATH \(mode 0600\) or ORDIVON_TOKEN/);
  });
});
