import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WireFormat } from '../../drivers/loop/conversation.js';
import { tempDir } from '../support/temp.js';

const SPEC = fileURLToPath(new URL('../../../examples/quickstart/task.json', import.meta.url));

/**
 * A state root and a configuration with one Loop v0 harness, `loop`, on the model at `baseUrl`
 * (its commands without network), and the `ordivon run` arguments that work the quickstart with it.
 * With `keyFrom`, the harness sends the key in that variable (listed in `envFrom`).
 */
export function loopRun(
  format: WireFormat,
  baseUrl: string,
  keyFrom?: string,
): { dir: string; state: string; args: string[] } {
  const dir = tempDir('ordivon-loop-run-');
  const state = join(dir, 'state');
  const config = join(dir, 'ordivon.config.json');
  const key = keyFrom === undefined ? {} : { keyFrom };
  writeFileSync(
    config,
    JSON.stringify({
      harnesses: {
        loop: {
          driver: 'loop',
          model: 'scripted-model',
          ...(keyFrom === undefined ? {} : { envFrom: [keyFrom] }),
          loop: { format, baseUrl, ...key },
          network: 'none',
        },
      },
    }),
  );
  const args = ['run', '--state', state, '--config', config, '--spec', SPEC, '--stages', 'investigate=loop,fix=loop'];
  return { dir, state, args };
}
