import { dirname } from 'node:path';
import type { HarnessConfig } from '../../frontier/harness-config.js';
import { hermesLikeLaunch } from '../../workloads/scripted/hermes-script.js';

/**
 * The scripted Hermes-like ACP agent asking one permission, to edit a file outside its workspace
 * (`../shared/settings.json`, tool call `tc-1`), then saying "asked"; its wire trace goes to `trace`,
 * whose folder the confined agent may write (it must not be the state root, which it never sees).
 */
export const permissionAgent = (trace: string): HarnessConfig => ({
  driver: 'acp',
  ...hermesLikeLaunch({
    trace,
    steps: [
      {
        do: 'permission',
        id: 'tc-1',
        title: 'edit the shared settings',
        kind: 'edit',
        locations: ['../shared/settings.json'],
      },
      { do: 'message', text: 'asked' },
    ],
  }),
  writable: [dirname(trace)],
  timeoutMs: 30_000,
});
