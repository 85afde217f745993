import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  loadAgentRecipes,
  SCRIPTED_SECRET,
  scriptedAgentLaunch,
  type ScriptedAgentLaunch,
} from '../../drivers/acp/agent-recipe.js';
import { ACP_AGENTS } from '../../drivers/acp/acp-agents.js';
import { tempDir } from '../support/temp.js';

// The published recipes (examples/agents.config.json) and how a test makes one concrete against a
// scripted model: only the endpoint and the secrets change. Agents are faked by empty entry files
// here; acp-real-agents.test.ts runs the real ones.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RECIPES = loadAgentRecipes(join(ROOT, 'examples', 'agents.config.json')).harnesses;
const PINNED = JSON.parse(readFileSync(join(ROOT, 'tools', 'agent-packages.json'), 'utf8')) as Record<string, string>;

/** An `.agents/` folder holding just the entry files the launch helpers look for. */
function fakeAgents(): string {
  const dir = tempDir('ordivon-fake-agents-');
  for (const agent of Object.values(ACP_AGENTS)) {
    const script = join(dir, 'node_modules', agent.package, agent.script);
    mkdirSync(dirname(script), { recursive: true });
    writeFileSync(script, '');
  }
  return dir;
}

function launch(harness: string, modelUrl: string, agentsDir: string, home: string): ScriptedAgentLaunch {
  const result = scriptedAgentLaunch(RECIPES[harness], { modelUrl, home, agentsDir, path: '/usr/bin:/bin' });
  assert.ok(result.ok, JSON.stringify(result));
  return result.value;
}

describe('agent recipes', () => {
  it('publishes one recipe per installed agent, each naming its real provider key in envFrom', () => {
    assert.deepEqual(Object.fromEntries(Object.entries(RECIPES).map(([name, r]) => [name, [r.command, r.envFrom]])), {
      'codex-acp': ['codex-acp', ['PATH', 'HOME', 'OPENAI_API_KEY']],
      gemini: ['gemini', ['PATH', 'HOME', 'GEMINI_API_KEY']],
      'claude-code': ['claude-code-acp', ['PATH', 'HOME', 'ANTHROPIC_API_KEY']],
      'claude-agent': ['claude-agent-acp', ['PATH', 'HOME', 'ANTHROPIC_API_KEY']],
    });
    assert.equal(RECIPES['gemini']!.clientFs, false);
    // Every agent a recipe launches is pinned for `npm run agents:install`.
    assert.deepEqual(
      Object.values(ACP_AGENTS)
        .map((a) => a.package)
        .sort(),
      Object.keys(PINNED).sort(),
    );
  });

  it('swaps only the endpoint: an environment variable for gemini and the Claude adapters, the recipe provider base_url for codex-acp', () => {
    const agents = fakeAgents();
    const gemini = launch('gemini', 'http://127.0.0.1:1111', agents, join(tempDir(), 'home'));
    assert.equal(gemini.command, process.execPath);
    assert.deepEqual(gemini.args, [join(agents, 'node_modules/@google/gemini-cli/bundle/gemini.js'), '--acp']);
    assert.equal(gemini.env['GOOGLE_GEMINI_BASE_URL'], 'http://127.0.0.1:1111');
    assert.equal(gemini.env['GEMINI_API_KEY'], SCRIPTED_SECRET);
    assert.equal(gemini.clientFs, false);
    assert.equal(gemini.api, 'gemini');

    const claudeHome = join(tempDir(), 'home');
    const claude = launch('claude-code', 'http://127.0.0.1:2222', agents, claudeHome);
    assert.deepEqual(claude.env, {
      ...RECIPES['claude-code']!.env,
      PATH: '/usr/bin:/bin',
      HOME: claudeHome,
      ANTHROPIC_API_KEY: SCRIPTED_SECRET,
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:2222',
    });
    assert.equal(claude.clientFs, true);

    const codex = launch('codex-acp', 'http://127.0.0.1:3333/v1', agents, join(tempDir(), 'home'));
    assert.deepEqual(codex.args.slice(1), [
      ...RECIPES['codex-acp']!.args,
      '-c',
      'model_providers.openai_api.base_url="http://127.0.0.1:3333/v1"',
    ]);
    assert.equal(codex.env['OPENAI_API_KEY'], SCRIPTED_SECRET);
  });

  it('prefers the native codex-acp binary when its platform package is there', () => {
    const agents = fakeAgents();
    const native = ACP_AGENTS['codex-acp']!.native?.();
    if (!native) return; // a platform without a codex-acp binary package uses the script
    const binary = join(agents, 'node_modules', native.package, native.path);
    mkdirSync(dirname(binary), { recursive: true });
    writeFileSync(binary, '#!/bin/sh\n');
    chmodSync(binary, 0o755);
    const codex = launch('codex-acp', 'http://127.0.0.1:3333/v1', agents, join(tempDir(), 'home'));
    assert.equal(codex.command, binary);
    assert.equal(codex.args[0], '-c');
  });

  it("prepares the agent's home as a user would have it and passes nothing of this process's environment but PATH", () => {
    const agents = fakeAgents();
    const home = join(tempDir(), 'home');
    process.env['GEMINI_API_KEY'] = 'a-real-looking-key';
    try {
      const gemini = launch('gemini', 'http://127.0.0.1:1111', agents, home);
      assert.ok(!Object.values(gemini.env).includes('a-real-looking-key'));
      assert.deepEqual(Object.keys(gemini.env).sort(), ['GEMINI_API_KEY', 'GOOGLE_GEMINI_BASE_URL', 'HOME', 'PATH']);
    } finally {
      delete process.env['GEMINI_API_KEY'];
    }
    const settings = JSON.parse(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8'));
    assert.equal(settings.privacy.usageStatisticsEnabled, false);
    launch('codex-acp', 'http://127.0.0.1:3333/v1', agents, home);
    assert.ok(existsSync(join(home, '.codex')));
  });

  for (const row of [
    {
      title: 'a recipe that does not parse',
      recipe: { driver: 'codex', command: 'x' },
      code: 'invalid_launch_config',
      path: 'driver',
    },
    {
      title: 'an envFrom variable with no scripted value',
      recipe: { driver: 'acp', command: 'gemini', envFrom: ['PATH', 'LANG'] },
      code: 'invalid_launch_config',
      path: 'envFrom.1',
    },
    {
      title: 'a codex-acp recipe that selects no provider',
      recipe: { driver: 'acp', command: 'codex-acp', args: [] },
      code: 'invalid_launch_config',
      path: 'args',
    },
    {
      title: 'a command no helper knows',
      recipe: { driver: 'acp', command: 'hermes' },
      code: 'agent_unsupported',
      path: 'command',
    },
  ]) {
    it(`answers ${row.title} with ${row.code} at ${row.path}`, () => {
      const result = scriptedAgentLaunch(row.recipe, {
        modelUrl: 'http://127.0.0.1:1',
        home: join(tempDir(), 'home'),
        agentsDir: fakeAgents(),
      });
      assert.ok(!result.ok);
      assert.deepEqual([result.code, result.path], [row.code, row.path]);
    });
  }

  it('answers agent_not_installed, naming npm run agents:install, when .agents/ lacks the package', () => {
    const result = scriptedAgentLaunch(RECIPES['claude-agent'], {
      modelUrl: 'http://127.0.0.1:1',
      home: join(tempDir(), 'home'),
      agentsDir: tempDir('ordivon-no-agents-'),
    });
    assert.ok(!result.ok);
    assert.equal(result.code, 'agent_not_installed');
    assert.match(result.detail, /@agentclientprotocol\/claude-agent-acp .*npm run agents:install/);
  });
});
