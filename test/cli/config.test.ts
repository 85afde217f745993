import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { main } from '../../cli/ordivon.js';
import { tempDir } from '../support/temp.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));
const ok = { driver: 'command', command: 'node' };

/** Runs `ordivon serve --config FILE --json` in this process; a refusal returns before anything opens. */
async function serveWith(
  config: string | object,
): Promise<{ exit: number; error: Record<string, unknown>; state: string }> {
  const dir = tempDir();
  const file = join(dir, 'ordivon.config.json');
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
  const state = join(dir, 'state');
  let stderr = '';
  const exit = await main(['serve', '--state', state, '--port', '0', '--config', file, '--json'], {
    json: false,
    out: () => undefined,
    // An error goes to stderr, the one JSON document there with --json.
    err: (text) => (stderr += text),
  });
  return { exit, error: (JSON.parse(stderr) as { error: Record<string, unknown> }).error, state };
}

describe('ordivon serve refuses a bad configuration (exit 2) before it opens the state root', () => {
  const cases: Array<[string, string | object, string, string]> = [
    [
      'an unknown driver',
      { harnesses: { gemini: { driver: 'gemini', command: 'gemini' } } },
      'invalid_config',
      'harnesses.gemini.driver',
    ],
    ['a file that is not JSON', '{"harnesses": {', 'invalid_config', '(root)'],
    [
      'a missing envFrom variable',
      { harnesses: { codex: { ...ok, envFrom: ['ORDIVON_CONFIG_TEST_UNSET'] } } },
      'env_missing',
      'harnesses.codex.envFrom.0',
    ],
    [
      'a timeout given as text',
      { harnesses: { a: { ...ok, timeoutMs: '60000' } } },
      'invalid_config',
      'harnesses.a.timeoutMs',
    ],
    ['args given as one string', { harnesses: { a: { ...ok, args: 'acp' } } }, 'invalid_config', 'harnesses.a.args'],
    ['a bad approval policy', { harnesses: {}, approvals: 'always' }, 'invalid_config', 'approvals'],
    ['a misspelt field', { harnesses: { a: { ...ok, env_from: ['X'] } } }, 'invalid_config', 'harnesses.a.env_from'],
  ];
  for (const [what, config, code, path] of cases)
    it(`${what}: ${code} at ${path}, nothing written`, async () => {
      const r = await serveWith(config);
      assert.deepEqual([r.exit, r.error.code, r.error.path], [2, code, path]);
      assert.equal(existsSync(r.state), false);
    });

  it('a misspelt top-level key is named, with the key it meant, before the field it left missing', async () => {
    const r = await serveWith({ harnesess: { a: ok } });
    assert.deepEqual([r.exit, r.error.code, r.error.path], [2, 'invalid_config', 'harnesess']);
    assert.match(String(r.error.message), /unknown key "harnesess" \(did you mean "harnesses"\?\)/);
  });

  it('a configuration saved with a byte-order mark is read as the JSON it is', async () => {
    // The same file with a bad driver: refused for the driver, not as "not JSON".
    const r = await serveWith(`\uFEFF${JSON.stringify({ harnesses: { x: { driver: 'ssh', command: 'x' } } })}`);
    assert.deepEqual([r.exit, r.error.code, r.error.path], [2, 'invalid_config', 'harnesses.x.driver']);
  });

  it('a --config file that cannot be read: config_unreadable at --config', async () => {
    const state = join(tempDir(), 'state');
    let stderr = '';
    const exit = await main(['serve', '--state', state, '--config', join(state, 'none.json'), '--json'], {
      json: false,
      out: () => undefined,
      // An error goes to stderr, the one JSON document there with --json.
      err: (text) => (stderr += text),
    });
    const { error } = JSON.parse(stderr) as { error: Record<string, unknown> };
    assert.deepEqual([exit, error.code, error.path], [2, 'config_unreadable', '--config']);
    assert.equal(existsSync(state), false);
  });

  it('reads ./ordivon.config.json from the current directory, and refuses it the same way', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'work'));
    writeFileSync(join(dir, 'work', 'ordivon.config.json'), JSON.stringify({ harnesses: { x: { driver: 'ssh' } } }));
    const r = spawnSync(process.execPath, [CLI, 'serve', '--state', join(dir, 'state'), '--port', '0', '--json'], {
      cwd: join(dir, 'work'),
      encoding: 'utf8',
    });
    const { error } = JSON.parse(r.stderr) as { error: Record<string, unknown> };
    assert.deepEqual([r.status, error.code, error.path], [2, 'invalid_config', 'harnesses.x.driver']);
    assert.match(String(error.message), /work\/ordivon\.config\.json/);
    assert.equal(existsSync(join(dir, 'state')), false);
  });

  it('takes at most one of --config, --demo-harnesses and --no-harnesses, and --acp-agent only with the demo ones', async () => {
    for (const argv of [
      ['--config', 'x.json', '--no-harnesses'],
      ['--demo-harnesses', '--no-harnesses'],
      ['--acp-agent', 'hermes-like'],
    ]) {
      let stderr = '';
      const state = join(tempDir(), 'state');
      const exit = await main(['serve', '--state', state, ...argv, '--json'], {
        json: false,
        out: () => undefined,
        // An error goes to stderr, the one JSON document there with --json.
        err: (text) => (stderr += text),
      });
      assert.deepEqual(
        [exit, (JSON.parse(stderr) as { error: { code: string } }).error.code],
        [2, 'usage'],
        argv.join(' '),
      );
      assert.equal(existsSync(state), false);
    }
  });
});
