import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isExecutable } from '../../os/index.js';

/**
 * What the launch helpers know about each real ACP agent installed by `npm run agents:install`
 * (pinned in tools/agent-packages.json, installed under `.agents/`), keyed by the command a
 * recipe names: where its entry point is, which wire API its model speaks, how its model
 * endpoint is pointed elsewhere, and what its home needs. Verified recipes: research/acp-real.md §2.
 */
export type ModelApi = 'responses' | 'gemini' | 'anthropic';

export interface AcpAgent {
  /** npm package providing the command. */
  package: string;
  /** The Node script inside the package (run with this process's Node, so no `node` on PATH is needed). */
  script: string;
  /** A native binary preferred over the script (one process, signals land directly): package and path in it. */
  native?: () => { package: string; path: string } | undefined;
  api: ModelApi;
  /** Points the launch at `modelUrl` (the scripted server's `url`): an environment variable or a `-c` override. */
  endpoint:
    | { kind: 'env'; variable: string }
    /** codex: `-c model_providers.<recipe's model_provider>.base_url="<url>"` after the recipe's own overrides. */
    | { kind: 'codex-provider' };
  /** Writes what the agent reads from a throwaway home (the settings a user would have). */
  prepareHome?: (home: string) => void;
}

const CODEX_ACP_PLATFORMS = new Set(['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64']);

export const ACP_AGENTS: Readonly<Record<string, AcpAgent>> = {
  'codex-acp': {
    package: '@zed-industries/codex-acp',
    // bin/codex-acp.js only finds the platform package's Rust binary and runs it.
    script: 'bin/codex-acp.js',
    native: () => {
      const platform = `${process.platform}-${process.arch}`;
      if (!CODEX_ACP_PLATFORMS.has(platform)) return undefined;
      return { package: `@zed-industries/codex-acp-${platform}`, path: 'bin/codex-acp' };
    },
    api: 'responses',
    endpoint: { kind: 'codex-provider' },
    prepareHome: (home) => mkdirSync(join(home, '.codex'), { recursive: true }),
  },
  gemini: {
    package: '@google/gemini-cli',
    script: 'bundle/gemini.js',
    api: 'gemini',
    // GOOGLE_GEMINI_BASE_URL selects gemini-cli's "gateway" auth: GEMINI_API_KEY is sent to that URL.
    endpoint: { kind: 'env', variable: 'GOOGLE_GEMINI_BASE_URL' },
    prepareHome: (home) => {
      mkdirSync(join(home, '.gemini'), { recursive: true });
      const settings = {
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
      };
      writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2) + '\n');
    },
  },
  'claude-code-acp': {
    package: '@zed-industries/claude-code-acp',
    script: 'dist/index.js',
    api: 'anthropic',
    endpoint: { kind: 'env', variable: 'ANTHROPIC_BASE_URL' },
  },
  'claude-agent-acp': {
    package: '@agentclientprotocol/claude-agent-acp',
    script: 'dist/index.js',
    api: 'anthropic',
    endpoint: { kind: 'env', variable: 'ANTHROPIC_BASE_URL' },
  },
};

/** The repository's `.agents/` (the first folder above this module holding a package.json). */
export function defaultAgentsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, '.agents');
}

export type AgentCommand =
  { ok: true; command: string; args: string[] } | { ok: false; code: 'agent_not_installed'; detail: string };

/**
 * How to start `agent` as installed under `agentsDir/node_modules`: its native binary when there
 * is one, else `node <script>`. `agent_not_installed` when neither is there.
 */
export function agentCommand(agent: AcpAgent, agentsDir: string): AgentCommand {
  const modules = join(agentsDir, 'node_modules');
  const native = agent.native?.();
  if (native) {
    const binary = join(modules, native.package, native.path);
    if (isExecutable(binary)) return { ok: true, command: binary, args: [] };
  }
  const script = join(modules, agent.package, agent.script);
  if (existsSync(script)) return { ok: true, command: process.execPath, args: [script] };
  return {
    ok: false,
    code: 'agent_not_installed',
    detail: `${agent.package} is not installed in ${agentsDir} (run npm run agents:install)`,
  };
}
