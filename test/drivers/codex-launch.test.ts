import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { codexCommand, codexEnv, CodexLaunchError, codexProviderArgs } from '../../drivers/codex/index.js';
import { tempDir } from '../support/temp.js';

const codexVersion = (createRequire(import.meta.url)('@openai/codex/package.json') as { version: string }).version;

describe('codexCommand', () => {
  it('resolves the native binary of the installed @openai/codex, which reports the package version', () => {
    const resolved = codexCommand();
    assert.ok(resolved.ok, JSON.stringify(resolved));
    assert.equal(resolved.value.via, 'native');
    assert.match(resolved.value.command, /@openai\/codex-linux-x64\/vendor\/x86_64-unknown-linux-musl\/bin\/codex$/);
    assert.deepEqual(resolved.value.args, ['app-server']);
    const home = tempDir('ordivon-codex-version-');
    const out = execFileSync(resolved.value.command, ['--version'], {
      env: codexEnv({ home }),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    assert.equal(out.trim(), `codex-cli ${codexVersion}`);
  });
});

describe('codexProviderArgs', () => {
  it('builds -c overrides for a keyless loopback provider with retries off and plugin sync disabled', () => {
    assert.deepEqual(codexProviderArgs({ baseUrl: 'http://127.0.0.1:4000/v1', model: 'm1' }), [
      '-c',
      'model_provider="ordivon"',
      '-c',
      'model_providers.ordivon={name="ordivon",base_url="http://127.0.0.1:4000/v1",wire_api="responses",request_max_retries=0,stream_max_retries=0}',
      '-c',
      'model="m1"',
      '-c',
      'analytics.enabled=false',
      '-c',
      'check_for_update_on_startup=false',
      '-c',
      'features.plugins=false',
    ]);
  });

  it('adds env_key, retries and a stream idle timeout for a real provider', () => {
    const args = codexProviderArgs({
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-5.2-codex',
      providerId: 'openai_api',
      providerName: 'OpenAI "API"',
      envKey: 'OPENAI_API_KEY',
      maxRetries: 4,
      streamIdleTimeoutMs: 300_000,
    });
    assert.equal(
      args[3],
      'model_providers.openai_api={name="OpenAI \\"API\\"",base_url="https://api.openai.com/v1",wire_api="responses",request_max_retries=4,stream_max_retries=4,env_key="OPENAI_API_KEY",stream_idle_timeout_ms=300000}',
    );
  });

  it('produces overrides the real binary accepts under --strict-config', () => {
    const resolved = codexCommand();
    assert.ok(resolved.ok);
    const args = codexProviderArgs({
      baseUrl: 'https://api.example.invalid/v1',
      model: 'some-model',
      envKey: 'SOME_API_KEY',
      maxRetries: 2,
      streamIdleTimeoutMs: 60_000,
    });
    const home = tempDir('ordivon-codex-strict-');
    const out = execFileSync(
      resolved.value.command,
      [...resolved.value.args, '--strict-config', ...args, '--print-startup-config'],
      {
        env: codexEnv({ home }),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    assert.equal((JSON.parse(out) as { appServerVersion: string }).appServerVersion, codexVersion);
  });

  const bad: [string, Parameters<typeof codexProviderArgs>[0], RegExp][] = [
    ['a non-http base URL', { baseUrl: 'file:///etc/passwd', model: 'm' }, /baseUrl/],
    ['an empty model', { baseUrl: 'http://127.0.0.1:1/v1', model: '' }, /model/],
    [
      'a provider id that is not a TOML bare key',
      { baseUrl: 'http://127.0.0.1:1/v1', model: 'm', providerId: 'a.b' },
      /providerId/,
    ],
  ];
  for (const [what, options, field] of bad) {
    it(`refuses ${what} with invalid_launch_config naming the field`, () => {
      assert.throws(
        () => codexProviderArgs(options),
        (error: unknown) => {
          assert.ok(error instanceof CodexLaunchError);
          assert.equal(error.code, 'invalid_launch_config');
          assert.match(error.message, field);
          return true;
        },
      );
    });
  }
});

describe('codexEnv', () => {
  it('creates a throwaway HOME / CODEX_HOME / XDG tree and inherits no proxy settings', () => {
    const home = tempDir('ordivon-codex-env-');
    const saved = process.env['HTTPS_PROXY'];
    process.env['HTTPS_PROXY'] = 'http://proxy.invalid:3128';
    try {
      const env = codexEnv({ home, extra: { OPENAI_API_KEY: 'sk-test' } });
      assert.equal(env['HOME'], home);
      assert.equal(env['CODEX_HOME'], join(home, '.codex'));
      for (const key of ['CODEX_HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME'])
        assert.ok(existsSync(env[key]!), key);
      assert.equal(env['OPENAI_API_KEY'], 'sk-test');
      assert.deepEqual(
        Object.keys(env).filter((k) => /proxy/i.test(k)),
        [],
      );
    } finally {
      if (saved === undefined) delete process.env['HTTPS_PROXY'];
      else process.env['HTTPS_PROXY'] = saved;
    }
  });

  it('refuses a relative home', () => {
    assert.throws(() => codexEnv({ home: 'relative/dir' }), {
      name: 'CodexLaunchError',
      code: 'invalid_launch_config',
      path: 'home',
      message: /^home: /,
    });
  });
});
