import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { HostConfig } from '../frontier/index.js';
import { CliError, EXIT, withoutBom } from './cli-io.js';
import { CONFIG_FILE } from './config-flag.js';

/** A configuration as a command uses it: where it was read from, and what it says. */
export interface LoadedConfig {
  /** Absolute path of the file. */
  file: string;
  config: HostConfig;
}

/**
 * Reads the Host configuration: `file` when given, else `./ordivon.config.json` when it exists,
 * else nothing (undefined). Everything it refuses is malformed input (exit 2), refused before any
 * state root is opened: `config_unreadable` (the file given cannot be read; `path` `--config`),
 * `invalid_config` (not JSON: `path` `(root)`; does not parse: `path` names the field, e.g.
 * `harnesses.gemini.driver`), `env_missing` (a variable named in `envFrom` is not set in `env`;
 * `path` `harnesses.<name>.envFrom.<i>`). Values of `envFrom` variables are only checked for
 * presence here; they are read again where each provider is spawned. A harness's relative
 * `readable` and `writable` paths are resolved against the file's folder.
 */
export async function loadConfig(
  file: string | undefined,
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<LoadedConfig | undefined> {
  const path = resolve(options.cwd ?? process.cwd(), file ?? CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (file === undefined && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError('config_unreadable', `cannot read ${path}: ${(error as Error).message}`, {
      exit: EXIT.usage,
      path: '--config',
      cause: error,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(withoutBom(text));
  } catch (error) {
    throw new CliError('invalid_config', `${path} is not JSON: ${(error as Error).message}`, {
      exit: EXIT.usage,
      path: '(root)',
      cause: error,
    });
  }
  const [{ HostError }, { parseHostConfig }] = await Promise.all([
    import('../kernel/index.js'),
    import('../frontier/index.js'),
  ]);
  try {
    return { file: path, config: parseHostConfig(withConfinedPaths(value, dirname(path)), options.env ?? process.env) };
  } catch (error) {
    if (error instanceof HostError)
      throw new CliError(error.code, `${path}: ${error.message}`, { exit: EXIT.usage, path: error.path, cause: error });
    throw error;
  }
}

/**
 * The file's harness `readable` / `writable` entries made absolute against `dir`, so a
 * configuration kept beside the agent it runs can say `"readable": ["."]`. Anything that is not
 * the expected shape is left as it is for the schema to refuse.
 */
function withConfinedPaths(value: unknown, dir: string): unknown {
  const harnesses = (value as { harnesses?: unknown } | null)?.harnesses;
  if (typeof harnesses !== 'object' || harnesses === null) return value;
  const resolved: Record<string, unknown> = {};
  for (const [name, harness] of Object.entries(harnesses)) {
    if (typeof harness !== 'object' || harness === null) {
      resolved[name] = harness;
      continue;
    }
    const copy: Record<string, unknown> = { ...harness };
    for (const field of ['readable', 'writable'])
      if (Array.isArray(copy[field]))
        copy[field] = (copy[field] as unknown[]).map((p) =>
          typeof p === 'string' && p !== '' && !isAbsolute(p) ? resolve(dir, p) : p,
        );
    resolved[name] = copy;
  }
  return { ...(value as object), harnesses: resolved };
}
