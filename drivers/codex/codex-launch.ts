import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { describeIssues, zodIssue } from '../../base/index.js';
import { CodexLaunchError } from './errors.js';
import { isExecutable } from '../../os/index.js';

/** How to start `codex app-server`: the native binary, or the npm shim run by this Node. */
export interface CodexCommand {
  command: string;
  args: string[];
  via: 'native' | 'shim';
  /** The package folders the app-server runs from: what a confined run must be able to read. */
  readable: string[];
}

/** npm platform packages of `@openai/codex`, keyed by `${process.platform}-${process.arch}`. */
const PLATFORM_BINARIES: Readonly<Record<string, { pkg: string; triple: string }>> = {
  'linux-x64': { pkg: '@openai/codex-linux-x64', triple: 'x86_64-unknown-linux-musl' },
  'linux-arm64': { pkg: '@openai/codex-linux-arm64', triple: 'aarch64-unknown-linux-musl' },
  'darwin-x64': { pkg: '@openai/codex-darwin-x64', triple: 'x86_64-apple-darwin' },
  'darwin-arm64': { pkg: '@openai/codex-darwin-arm64', triple: 'aarch64-apple-darwin' },
};

function tryResolve(require: NodeJS.Require, specifier: string): string | undefined {
  try {
    return require.resolve(specifier);
  } catch {
    return undefined;
  }
}

/**
 * Resolves how to launch the installed `@openai/codex` as an app-server. Prefers the native
 * binary of the platform package (no Node shim in between: one process, signals land directly);
 * falls back to the package's `bin/codex.js` (what `node_modules/.bin/codex` links to), run with
 * this process's Node so it does not depend on `node` being on the child's PATH. Looks next to
 * this module first, then inside `@openai/codex` (nested installs). Never throws.
 */
export function codexCommand():
  { ok: true; value: CodexCommand } | { ok: false; code: 'codex_unavailable'; detail: string } {
  const here = createRequire(import.meta.url);
  const shimPackage = tryResolve(here, '@openai/codex/package.json');
  const requirers = [here, ...(shimPackage === undefined ? [] : [createRequire(shimPackage)])];
  const platform = PLATFORM_BINARIES[`${process.platform}-${process.arch}`];
  if (platform !== undefined) {
    for (const require of requirers) {
      const pkgJson = tryResolve(require, `${platform.pkg}/package.json`);
      if (pkgJson === undefined) continue;
      const binary = join(dirname(pkgJson), 'vendor', platform.triple, 'bin', 'codex');
      if (isExecutable(binary))
        return {
          ok: true,
          value: { command: binary, args: ['app-server'], via: 'native', readable: [dirname(pkgJson)] },
        };
    }
  }
  if (shimPackage !== undefined) {
    const shim = join(dirname(shimPackage), 'bin', 'codex.js');
    return {
      ok: true,
      value: {
        command: process.execPath,
        args: [shim, 'app-server'],
        via: 'shim',
        readable: [dirname(dirname(shimPackage))],
      },
    };
  }
  return {
    ok: false,
    code: 'codex_unavailable',
    detail: '@openai/codex is not installed where this module can resolve it',
  };
}

/** `invalid_launch_config` naming every bad field, with the first one's path as `path`. */
function invalidLaunchConfig(error: z.ZodError): CodexLaunchError {
  const { path } = zodIssue('invalid_launch_config', error);
  return new CodexLaunchError('invalid_launch_config', describeIssues(error), { path });
}

const ProviderOptions = z.object({
  /** Responses-API base URL, e.g. `http://127.0.0.1:PORT/v1` or `https://api.openai.com/v1`. */
  baseUrl: z.url({ protocol: /^https?$/ }),
  model: z.string().min(1),
  /** Key under `model_providers` (a TOML bare key). */
  providerId: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('ordivon'),
  providerName: z.string().min(1).optional(),
  /** Name of the environment variable holding the API key (absent for a keyless loopback model). */
  envKey: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional(),
  /** Codex's own HTTP/stream retries; 0 (the default) makes every provider failure visible at once. */
  maxRetries: z.number().int().nonnegative().default(0),
  /** How long Codex waits on a silent response stream before failing the turn. */
  streamIdleTimeoutMs: z.number().int().positive().optional(),
});
export type CodexProviderOptions = z.input<typeof ProviderOptions>;

/** A TOML basic string; JSON's escapes are valid TOML escapes. */
const tomlString = (value: string): string => JSON.stringify(value);

/**
 * `-c` overrides (for after `app-server`) that select a Responses-API model provider, plus the
 * settings a supervised run wants: retries as given (default off), no analytics, no update check,
 * no plugin marketplace sync (the only network access besides the provider seen on 0.171).
 * Throws `CodexLaunchError('invalid_launch_config')` naming the bad field.
 */
export function codexProviderArgs(options: CodexProviderOptions): string[] {
  const parsed = ProviderOptions.safeParse(options);
  if (!parsed.success) throw invalidLaunchConfig(parsed.error);
  const o = parsed.data;
  const fields = [
    `name=${tomlString(o.providerName ?? o.providerId)}`,
    `base_url=${tomlString(o.baseUrl)}`,
    'wire_api="responses"',
    `request_max_retries=${o.maxRetries}`,
    `stream_max_retries=${o.maxRetries}`,
    ...(o.envKey === undefined ? [] : [`env_key=${tomlString(o.envKey)}`]),
    ...(o.streamIdleTimeoutMs === undefined ? [] : [`stream_idle_timeout_ms=${o.streamIdleTimeoutMs}`]),
  ];
  const overrides = [
    `model_provider=${tomlString(o.providerId)}`,
    `model_providers.${o.providerId}={${fields.join(',')}}`,
    `model=${tomlString(o.model)}`,
    'analytics.enabled=false',
    'check_for_update_on_startup=false',
    // Without this, 0.171 runs `git ls-remote https://github.com/openai/plugins…` at thread start.
    'features.plugins=false',
  ];
  return overrides.flatMap((override) => ['-c', override]);
}

const EnvOptions = z.object({
  /** Absolute throwaway directory; HOME, CODEX_HOME and the XDG dirs are created inside it. */
  home: z.string().regex(/^\//, 'must be an absolute path'),
  /** PATH for the app-server and its tool commands; defaults to this process's PATH. */
  path: z.string().min(1).optional(),
  /** Extra variables, e.g. `{ OPENAI_API_KEY: … }` for the provider's `envKey`. */
  extra: z.record(z.string(), z.string()).default({}),
});
export type CodexEnvOptions = z.input<typeof EnvOptions>;

/**
 * The complete environment for a Codex run (the driver does not inherit the parent's): HOME,
 * CODEX_HOME and XDG dirs inside `home` (created here — Codex refuses a CODEX_HOME that does not
 * exist), PATH, a UTF-8 locale, and `extra`. No proxy variables: the run talks to the configured
 * provider directly. Throws `CodexLaunchError('invalid_launch_config')` for a bad option.
 */
export function codexEnv(options: CodexEnvOptions): Record<string, string> {
  const parsed = EnvOptions.safeParse(options);
  if (!parsed.success) throw invalidLaunchConfig(parsed.error);
  const { home, path, extra } = parsed.data;
  const dirs = {
    HOME: home,
    CODEX_HOME: join(home, '.codex'),
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  return { ...dirs, PATH: path ?? process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', ...extra };
}
