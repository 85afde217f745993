import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultAgentsDir } from './acp-agents.js';

/**
 * Launch helpers for the real `opencode acp` (npm `opencode-linux-x64`, a glibc ELF that needs AVX2)
 * run offline against a loopback chat-completions model. Verified recipe: research/acp-real.md §2.
 *
 * The binary is where `npm run agents:install` (or `npm start`'s `prestart`) puts it,
 * `.agents/demo/`: only a clone installs it, never a consumer of the package. The path is answered
 * whether or not it is there; callers check that it exists.
 */
export function opencodeCommand(agentsDir = defaultAgentsDir()): {
  command: string;
  args: string[];
  readable: string[];
} {
  const pkg = join(agentsDir, 'demo', 'node_modules', 'opencode-linux-x64');
  // `readable`: the package a confined run needs to see (the binary and what lies beside it).
  return { command: join(pkg, 'bin', 'opencode'), args: ['acp'], readable: [pkg] };
}

export interface OpencodeEnvOptions {
  /** Throwaway home for this run; HOME, the XDG dirs and `opencode.json` live under it. */
  home: string;
  /** Base URL of an OpenAI-compatible chat-completions server, e.g. `http://127.0.0.1:PORT/v1`. */
  modelUrl: string;
  /** `ask` routes edits and shell commands through `session/request_permission` (and writes through `fs/write_text_file`). */
  permission?: 'ask' | 'allow';
  model?: string;
}

/** The `opencode.json` for a single loopback provider `mock` with one tool-calling model. */
export function opencodeConfig(options: OpencodeEnvOptions): Record<string, unknown> {
  const model = options.model ?? 'scripted-model';
  return {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      mock: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted model (loopback)',
        options: { baseURL: options.modelUrl, apiKey: 'sk-scripted' },
        models: { [model]: { name: 'Scripted model', tool_call: true, limit: { context: 128000, output: 4096 } } },
      },
    },
    model: `mock/${model}`,
    small_model: `mock/${model}`,
    enabled_providers: ['mock'],
    autoupdate: false,
    share: 'disabled',
    ...(options.permission === 'ask' ? { permission: { edit: 'ask', bash: 'ask' } } : {}),
  };
}

/**
 * Writes `<home>/opencode.json`, creates the XDG dirs and returns the complete environment for
 * `opencode acp` (the driver passes no other variables): a throwaway HOME, no proxies, opencode's
 * network features off, and `npm_config_registry` black-holed so its embedded npm never reaches
 * the registry. Throws if `home` cannot be written.
 */
export function opencodeEnv(options: OpencodeEnvOptions): Record<string, string> {
  const xdg = {
    XDG_CONFIG_HOME: join(options.home, '.config'),
    XDG_DATA_HOME: join(options.home, '.local', 'share'),
    XDG_CACHE_HOME: join(options.home, '.cache'),
    XDG_STATE_HOME: join(options.home, '.local', 'state'),
  };
  for (const dir of Object.values(xdg)) mkdirSync(dir, { recursive: true });
  const configPath = join(options.home, 'opencode.json');
  writeFileSync(configPath, JSON.stringify(opencodeConfig(options), null, 2) + '\n');
  return {
    HOME: options.home,
    ...xdg,
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    OPENCODE_CONFIG: configPath,
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_SHARE: '1',
    npm_config_registry: 'http://127.0.0.1:9/',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}
