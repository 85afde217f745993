import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HostError } from '../../kernel/errors.js';
import { parseHostConfig } from '../../frontier/harness-config.js';
import { openHost } from '../../host/host.js';
import { tempDir } from '../support/temp.js';

const ok = { driver: 'command', command: 'node' };
const ENV = { OPENAI_API_KEY: 'sk-test', EMPTY: '' };
const loop = {
  driver: 'loop',
  model: 'gpt-5.4',
  envFrom: ['OPENAI_API_KEY'],
  loop: { format: 'responses', baseUrl: 'https://api.openai.com/v1', keyFrom: 'OPENAI_API_KEY' },
};

/** The code and path `parseHostConfig` refuses `value` with. */
function refusal(value: unknown): { code: string; path: string | undefined } {
  try {
    parseHostConfig(value, ENV);
  } catch (error) {
    assert.ok(error instanceof HostError, String(error));
    return { code: error.code, path: error.path };
  }
  assert.fail('parsed');
}

describe('parseHostConfig', () => {
  const cases: Array<[string, unknown, string, string]> = [
    [
      'an unknown driver',
      { harnesses: { gemini: { driver: 'gemini', command: 'g' } } },
      'invalid_config',
      'harnesses.gemini.driver',
    ],
    ['a missing driver', { harnesses: { a: { command: 'g' } } }, 'invalid_config', 'harnesses.a.driver'],
    ['a missing command', { harnesses: { a: { driver: 'acp' } } }, 'invalid_config', 'harnesses.a.command'],
    ['args that are not a list', { harnesses: { a: { ...ok, args: '--acp' } } }, 'invalid_config', 'harnesses.a.args'],
    [
      'an arg that is not a string',
      { harnesses: { a: { ...ok, args: ['x', 1] } } },
      'invalid_config',
      'harnesses.a.args.1',
    ],
    [
      'an env value that is not a string',
      { harnesses: { a: { ...ok, env: { PATH: 1 } } } },
      'invalid_config',
      'harnesses.a.env.PATH',
    ],
    [
      'a timeout given as text',
      { harnesses: { a: { ...ok, timeoutMs: '600000' } } },
      'invalid_config',
      'harnesses.a.timeoutMs',
    ],
    ['a negative timeout', { harnesses: { a: { ...ok, timeoutMs: -1 } } }, 'invalid_config', 'harnesses.a.timeoutMs'],
    [
      'an envFrom entry that is no variable name',
      { harnesses: { a: { ...ok, envFrom: ['OPENAI-KEY'] } } },
      'invalid_config',
      'harnesses.a.envFrom.0',
    ],
    [
      'envFrom as a string',
      { harnesses: { a: { ...ok, envFrom: 'OPENAI_API_KEY' } } },
      'invalid_config',
      'harnesses.a.envFrom',
    ],
    [
      'a name in both env and envFrom',
      { harnesses: { a: { ...ok, env: { OPENAI_API_KEY: 'x' }, envFrom: ['OPENAI_API_KEY'] } } },
      'invalid_config',
      'harnesses.a.envFrom.0',
    ],
    [
      'an unknown key in a harness',
      { harnesses: { a: { ...ok, envfrom: ['X'] } } },
      'invalid_config',
      'harnesses.a.envfrom',
    ],
    ['an unknown top-level key', { harnesses: {}, approval: 'accept' }, 'invalid_config', 'approval'],
    [
      'a bad harness approval policy',
      { harnesses: { a: { ...ok, approvals: 'ask' } } },
      'invalid_config',
      'harnesses.a.approvals',
    ],
    ['a bad default approval policy', { harnesses: {}, approvals: true }, 'invalid_config', 'approvals'],
    [
      'a route policy forbidding an unknown kind',
      { harnesses: {}, approvals: { policy: 'route', forbid: ['nuke'] } },
      'invalid_config',
      'approvals',
    ],
    [
      'a route policy with an unknown setting',
      { harnesses: { a: { ...ok, approvals: { policy: 'route', allow: ['edit'] } } } },
      'invalid_config',
      'harnesses.a.approvals.allow',
    ],
    ['no harnesses', {}, 'invalid_config', 'harnesses'],
    ['harnesses as a list', { harnesses: [ok] }, 'invalid_config', 'harnesses'],
    ['a configuration that is not an object', [], 'invalid_config', '(root)'],
    [
      'an envFrom variable that is not set',
      { harnesses: { a: ok, b: { ...ok, envFrom: ['OPENAI_API_KEY', 'ORDIVON_NOT_SET'] } } },
      'env_missing',
      'harnesses.b.envFrom.1',
    ],
    [
      'an envFrom variable that is empty',
      { harnesses: { a: { ...ok, envFrom: ['EMPTY'] } } },
      'env_missing',
      'harnesses.a.envFrom.0',
    ],
    [
      'a loop harness with a command',
      { harnesses: { l: { ...loop, command: 'node' } } },
      'invalid_config',
      'harnesses.l.command',
    ],
    [
      'a loop harness without a model',
      { harnesses: { l: { ...loop, model: undefined } } },
      'invalid_config',
      'harnesses.l.model',
    ],
    [
      'a loop harness without its settings',
      { harnesses: { l: { ...loop, loop: undefined } } },
      'invalid_config',
      'harnesses.l.loop',
    ],
    [
      'a loop key variable not brought by envFrom',
      { harnesses: { l: { ...loop, envFrom: [] } } },
      'invalid_config',
      'harnesses.l.loop.keyFrom',
    ],
    [
      'an unknown wire format',
      { harnesses: { l: { ...loop, loop: { ...loop.loop, format: 'gemini' } } } },
      'invalid_config',
      'harnesses.l.loop.format',
    ],
    [
      'a base URL that is not http(s)',
      { harnesses: { l: { ...loop, loop: { ...loop.loop, baseUrl: 'file:///etc/passwd' } } } },
      'invalid_config',
      'harnesses.l.loop.baseUrl',
    ],
    [
      'loop settings on another driver',
      { harnesses: { a: { ...ok, loop: loop.loop } } },
      'invalid_config',
      'harnesses.a.loop',
    ],
  ];
  for (const [what, value, code, path] of cases)
    it(`refuses ${what}: ${code} at ${path}`, () => assert.deepEqual(refusal(value), { code, path }));

  it('says whether an envFrom variable is unset or set but empty', () => {
    const messageOf = (envFrom: string[]): string => {
      try {
        parseHostConfig({ harnesses: { a: { ...ok, envFrom } } }, ENV);
      } catch (error) {
        assert.ok(error instanceof HostError && error.code === 'env_missing', String(error));
        return error.message;
      }
      assert.fail('parsed');
    };
    assert.match(messageOf(['EMPTY']), /^EMPTY is set but empty in the environment/);
    assert.match(messageOf(['ORDIVON_NOT_SET']), /^ORDIVON_NOT_SET is not set in the environment/);
  });

  it('takes a full configuration and keeps envFrom as names', () => {
    const config = {
      approvals: 'decline',
      harnesses: {
        codex: {
          driver: 'codex',
          command: 'codex',
          args: ['app-server'],
          env: { PATH: '/usr/bin' },
          envFrom: ['OPENAI_API_KEY'],
          model: 'gpt-5',
          timeoutMs: 1_200_000,
          approvals: 'accept',
        },
        sh: ok,
        routed: { ...ok, approvals: { policy: 'route', forbid: ['execute'] } },
        plain: { ...ok, approvals: 'route' },
      },
    };
    assert.deepEqual(parseHostConfig(config, ENV), config);
  });
});

describe('openHost checks its harnesses before it opens anything', () => {
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    [
      'an unknown driver',
      { harnesses: { g: { driver: 'gemini', command: 'g' } } },
      'invalid_config',
      'harnesses.g.driver',
    ],
    [
      'a missing envFrom variable',
      { harnesses: { g: { ...ok, envFrom: ['ORDIVON_NOT_SET'] } } },
      'env_missing',
      'harnesses.g.envFrom.0',
    ],
    ['a bad approval policy', { harnesses: {}, approvals: 'maybe' }, 'invalid_config', 'approvals'],
  ];
  for (const [what, options, code, path] of cases)
    it(`refuses ${what} with ${code} at ${path}, and the state root is not created`, async () => {
      const state = join(tempDir(), 'state');
      await assert.rejects(
        openHost({ state, ...(options as { harnesses: Record<string, never> }) }),
        (error: unknown) => error instanceof HostError && error.code === code && error.path === path,
      );
      assert.equal(existsSync(state), false);
    });
});
