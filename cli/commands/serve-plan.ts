import { resolveStateRoot } from '../../store/index.js';
import { tokenRefusal, type Listener } from '../service/access.js';
import { CliError, EXIT, cliErrorOf } from '../cli-io.js';
import { loadConfig, type LoadedConfig } from '../config.js';
import { DEFAULT_PORT, type ServeArgs } from './serve-flags.js';
import { serveToken, type TokenSource } from './serve-token.js';

/** Which harnesses the service runs. */
export type Harnesses =
  | { kind: 'none'; why: 'flag' | 'no-config' }
  | { kind: 'demo'; acpAgent: 'opencode' | 'hermes-like' }
  | { kind: 'config'; loaded: LoadedConfig };

/** What the flags ask for, refused before anything is opened or made. */
export interface ServePlan {
  harnesses: Harnesses;
  token: string | undefined;
  tokenSource: TokenSource;
  listener: Listener;
  state: string;
  /** The database's URL; undefined: the embedded store. */
  store: string | undefined;
}

/** The flags checked against each other, the configuration read, the token and the listener chosen. */
export async function planServe(values: ServeArgs): Promise<ServePlan> {
  if (values.port !== undefined && values.socket !== undefined)
    throw new CliError('usage', 'give --port or --socket, not both', { exit: EXIT.usage });
  const port = values.port ?? DEFAULT_PORT;
  const harnesses = await chooseHarnesses(values);
  const { token, source: tokenSource } = serveToken(values);
  const listener: Listener =
    values.socket !== undefined ? { kind: 'socket', path: values.socket } : { kind: 'tcp', host: values.host, port };
  // Before the state root is made: a refused start leaves nothing behind.
  const refusal = tokenRefusal(listener, token);
  if (refusal) throw cliErrorOf(refusal, { exit: EXIT.usage });
  const state = resolveStateRoot(values.state);
  const store = storeUrl(values.store);
  if (store === undefined) refuseClusterFlags(values);
  return { harnesses, token, tokenSource, listener, state, store };
}

/** Without a database, a flag only a Host sharing one takes is a `usage` error naming it. */
function refuseClusterFlags(values: ServeArgs): void {
  const clusterFlag = (
    [
      'host-id',
      'lease-ms',
      'poll-ms',
      'no-notify',
      'advertise-url',
      'db-connect-timeout-ms',
      'db-statement-timeout-ms',
    ] as const
  ).find((flag) => values[flag] !== undefined && values[flag] !== false);
  if (clusterFlag !== undefined)
    throw new CliError(
      'usage',
      `--${clusterFlag}: only with --store (or ORDIVON_STORE), as every flag of a Host sharing a database`,
      {
        exit: EXIT.usage,
        path: `--${clusterFlag}`,
      },
    );
}

/** `--store`, else `ORDIVON_STORE` (checked like the flag: `usage` naming it), else undefined: the embedded store. */
function storeUrl(flag: string | undefined): string | undefined {
  if (flag !== undefined) return flag;
  const env = process.env.ORDIVON_STORE;
  if (env === undefined || env === '') return undefined;
  if (!/^postgres(ql)?:\/\//.test(env))
    throw new CliError('usage', 'ORDIVON_STORE: expected a postgres:// or postgresql:// URL', {
      exit: EXIT.usage,
      path: 'ORDIVON_STORE',
    });
  return env;
}

/**
 * Which harnesses the flags ask for: at most one of `--config`, `--demo-harnesses`,
 * `--no-harnesses`; without any, `./ordivon.config.json` when present. The configuration is read
 * and checked here, before anything is opened (`loadConfig`'s refusals exit 2).
 */
async function chooseHarnesses(values: {
  config: string | undefined;
  'demo-harnesses': boolean;
  'no-harnesses': boolean;
  'acp-agent': 'opencode' | 'hermes-like' | undefined;
}): Promise<Harnesses> {
  const given = (['config', 'demo-harnesses', 'no-harnesses'] as const).filter((flag) =>
    flag === 'config' ? values.config !== undefined : values[flag],
  );
  if (given.length > 1)
    throw new CliError(
      'usage',
      `give one of --config, --demo-harnesses, --no-harnesses (got --${given.join(', --')})`,
      {
        exit: EXIT.usage,
      },
    );
  if (values['acp-agent'] !== undefined && !values['demo-harnesses'])
    throw new CliError('usage', '--acp-agent: only with --demo-harnesses', { exit: EXIT.usage, path: '--acp-agent' });
  if (values['no-harnesses']) return { kind: 'none', why: 'flag' };
  if (values['demo-harnesses']) return { kind: 'demo', acpAgent: values['acp-agent'] ?? 'opencode' };
  const loaded = await loadConfig(values.config);
  return loaded ? { kind: 'config', loaded } : { kind: 'none', why: 'no-config' };
}
