import { CodexLaunchError, codexCommand, codexEnv, codexProviderArgs } from '../../drivers/codex/index.js';

/** The model name the scripted provider reports; visible in receipts as `model`. */
export const SCRIPTED_MODEL_NAME = 'ordivon-scripted-model';

export interface ScriptedCodexLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** The app-server's install, which it reads when confined. */
  readable: string[];
  /** Its throwaway home, which it writes when confined. */
  writable: string[];
}

/**
 * Launch configuration for the REAL `codex app-server` pointed at the SCRIPTED loopback model
 * (`startResponsesModel`): provider id `ordivon_scripted`, retries off, a throwaway HOME /
 * CODEX_HOME / XDG tree created under `home`, nothing inherited from this process but PATH.
 * `extraArgs` are appended after the provider overrides (more `-c key=value`).
 * Throws `CodexLaunchError` (`codex_unavailable`, `invalid_launch_config`).
 */
export function scriptedCodexLaunch(options: {
  modelUrl: string;
  home: string;
  extraArgs?: readonly string[];
}): ScriptedCodexLaunch {
  const resolved = codexCommand();
  if (!resolved.ok) throw new CodexLaunchError(resolved.code, resolved.detail);
  return {
    command: resolved.value.command,
    args: [
      ...resolved.value.args,
      ...codexProviderArgs({
        baseUrl: options.modelUrl,
        model: SCRIPTED_MODEL_NAME,
        providerId: 'ordivon_scripted',
        providerName: 'Ordivon scripted model',
      }),
      ...(options.extraArgs ?? []),
    ],
    env: codexEnv({ home: options.home }),
    readable: resolved.value.readable,
    writable: [options.home],
  };
}
