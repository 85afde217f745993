import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../support/temp.js';
import { commitAndObserve, http, startServe } from './serve-child.js';

/** Every regular file under `dir`, recursively (LMDB data and lock files included). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : entry.isFile() ? [path] : [];
  });
}

/** The files under `dir` whose bytes contain `needle` in any of the encodings a store might use. */
function filesHolding(dir: string, needle: string): string[] {
  const forms = [
    Buffer.from(needle, 'utf8'),
    Buffer.from(needle, 'utf16le'),
    Buffer.from(Buffer.from(needle).toString('base64')),
  ];
  return filesUnder(dir).filter((file) => {
    const bytes = readFileSync(file);
    return forms.some((form) => bytes.includes(form));
  });
}

/**
 * The provider: reports, into a file outside the state root, whether the variable arrived and the
 * digest of its value (never the value), and prints one line.
 */
const PROBE = `
const { createHash } = require('node:crypto');
const value = process.env[process.env.PROBE_VAR];
require('node:fs').writeFileSync(process.env.PROBE_REPORT, JSON.stringify({
  arrived: value !== undefined,
  digest: value === undefined ? null : createHash('sha256').update(value).digest('hex'),
  inherited: Object.keys(process.env).sort(),
}));
console.log('probe done');
`;

describe('ordivon serve with a harness configuration', { timeout: 60_000 }, () => {
  it('passes an envFrom secret to the provider and writes it nowhere under the state root', async () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    // The probe runs confined: its report goes to a folder of its own, the one it may write.
    mkdirSync(join(dir, 'probe'));
    const report = join(dir, 'probe', 'probe-report.json');
    const name = 'ORDIVON_TEST_SECRET_KEY';
    const secret = `ordivon-secret-${randomBytes(24).toString('hex')}`;
    const config = join(dir, 'harnesses.json');
    writeFileSync(
      config,
      JSON.stringify({
        approvals: 'decline',
        harnesses: {
          probe: {
            driver: 'command',
            command: process.execPath,
            args: ['-e', PROBE],
            env: { PROBE_VAR: name, PROBE_REPORT: report },
            envFrom: [name],
            writable: [join(dir, 'probe')],
          },
        },
      }),
    );

    const serve = await startServe(['--state', state, '--port', '0', '--config', config], { [name]: secret });
    try {
      assert.deepEqual([serve.ready.harnesses, serve.ready.config], ['config (probe)', config]);
      const spec = {
        taskId: 'secret-1',
        title: 'Receive a key by name',
        goal: 'Run the probe with the key from the environment.',
        requiredArtifacts: [{ name: 'out.json' }],
      };
      assert.equal((await http(serve.ready, 'POST', '/tasks', { body: spec })).status, 201);
      await commitAndObserve(serve.ready, 'secret-1', 'probe', 'work');
      const shown = await http(serve.ready, 'GET', '/tasks/secret-1');
      assert.equal(JSON.stringify(shown.body).includes(secret), false);
    } finally {
      assert.equal((await serve.stop()).code, 0, serve.stderr());
    }

    const probe = JSON.parse(readFileSync(report, 'utf8')) as { arrived: boolean; digest: string; inherited: string[] };
    assert.deepEqual(
      [probe.arrived, probe.digest],
      [true, createHash('sha256').update(secret).digest('hex')],
      'the provider received the value',
    );
    assert.deepEqual(
      probe.inherited.filter((k) => k !== 'PWD' && k !== 'SHLVL' && k !== '_'),
      [name, 'PROBE_REPORT', 'PROBE_VAR'],
      'the provider gets env and envFrom, nothing inherited',
    );
    assert.ok(
      filesUnder(state).some((f) => f.endsWith('.mdb')),
      'the state root holds LMDB files',
    );
    assert.deepEqual(filesHolding(state, secret), [], 'no file under the state root holds the secret');
    // The grep reads the LMDB files where the job records are: the variable's name is there.
    assert.notDeepEqual(filesHolding(state, name), []);
  });

  it('reads ./ordivon.config.json from its working directory, and without one runs the bare supervisor', async () => {
    const withConfig = tempDir();
    writeFileSync(
      join(withConfig, 'ordivon.config.json'),
      JSON.stringify({ harnesses: { here: { driver: 'command', command: process.execPath } } }),
    );
    const without = tempDir();
    for (const [cwd, harnesses, config] of [
      [withConfig, 'config (here)', join(withConfig, 'ordivon.config.json')],
      [without, 'none', null],
    ] as const) {
      const serve = await startServe(['--state', join(cwd, 'state'), '--port', '0'], {}, { cwd });
      try {
        assert.deepEqual([serve.ready.harnesses, serve.ready.config], [harnesses, config]);
      } finally {
        assert.equal((await serve.stop()).code, 0, serve.stderr());
      }
    }
  });
});
