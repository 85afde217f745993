import { driverFailure, type DriverFailure } from './failures.js';
import type { DriverRunInput } from './receipt.js';

/**
 * Why an `envFrom` variable's value cannot be passed (`is not set`, `is set but empty`: an empty
 * key is refused like a missing one, and the message says which it was), or null.
 */
export function envValueMissing(value: string | undefined): 'is not set' | 'is set but empty' | null {
  if (value === undefined) return 'is not set';
  return value === '' ? 'is set but empty' : null;
}

/**
 * The run input a driver receives: `env` plus, for each name in `envFrom`, its value read from
 * `from` (the spawning thread's `process.env`, which the pool shares with the main thread, see
 * `createDriverPool`). Called in the worker right before the driver runs, so a value exists only
 * in this thread's memory and the provider's environment; the input the Runtime stored and the
 * `DriverResult` that goes back keep the names alone.
 *
 * A variable that is unset or empty is `spawn_failed` (`env_missing`, `path` = `envFrom.<i>`); a
 * name also given in `env` is `invalid_input` (`path` = `envFrom.<i>`): which value would win is
 * not something to guess about a secret. Nothing is spawned in either case.
 */
export function resolveEnvFrom(
  input: DriverRunInput,
  from: NodeJS.ProcessEnv,
): { ok: true; input: DriverRunInput } | { ok: false; failure: DriverFailure } {
  if (input.envFrom.length === 0) return { ok: true, input };
  const env = { ...input.env };
  for (const [i, name] of input.envFrom.entries()) {
    if (Object.hasOwn(input.env, name))
      return {
        ok: false,
        failure: driverFailure('invalid_input', 'invalid_input', `envFrom names ${name}, which env also sets`, {
          path: `envFrom.${i}`,
        }),
      };
    const value = from[name];
    const missing = envValueMissing(value);
    if (missing !== null)
      return {
        ok: false,
        failure: driverFailure(
          'spawn_failed',
          'env_missing',
          `${name} (named in envFrom) ${missing} in the environment of the process that spawns the provider`,
          { path: `envFrom.${i}` },
        ),
      };
    env[name] = value as string;
  }
  return { ok: true, input: { ...input, env } };
}
