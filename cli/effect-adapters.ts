import type { EffectAdapter } from '../frontier/index.js';
import type { HostConfig } from '../frontier/index.js';
import { attemptWorkspace } from './commands/work-back.js';

/**
 * The Effect adapters a configuration's `effects` names (docs/publication.md), made for the Host
 * on `stateRoot`: a `git` adapter publishes the workspace of the Task Attempt its request id names.
 * Loaded only when the file names one: `ordivon run` without `effects` loads no adapter.
 */
export async function effectAdaptersOf(
  config: Pick<HostConfig, 'effects'>,
  stateRoot: string,
): Promise<{ effectAdapters?: Record<string, EffectAdapter> }> {
  const entries = Object.entries(config.effects ?? {});
  if (entries.length === 0) return {};
  const { gitEffectAdapter } = await import('../adapters/index.js');
  const effectAdapters: Record<string, EffectAdapter> = {};
  for (const [name, effect] of entries)
    effectAdapters[name] = gitEffectAdapter({
      remote: effect.remote,
      ...(effect.endpoint !== undefined ? { endpoint: effect.endpoint } : {}),
      ...(effect.exclude !== undefined ? { exclude: effect.exclude } : {}),
      workspace: ({ taskId, attempt }) => attemptWorkspace(stateRoot, taskId, attempt),
    });
  return { effectAdapters };
}
