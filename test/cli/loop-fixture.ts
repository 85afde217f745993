import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WireFormat } from '../../drivers/loop/conversation.js';
import type { ChatReply } from '../../workloads/scripted/chat-model.js';
import { tempDir } from '../support/temp.js';

/** The quickstart's findings as the scripted model writes them. */
export const FINDINGS = JSON.stringify({
  failing: ['parses milliseconds'],
  cause: 'the unit pattern tries m before ms',
});
/** What every scripted answer spends: 110 tokens. */
export const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
/** A scripted answer that calls one of Loop v0's tools. */
export const call = (name: string, args: Record<string, unknown>): ChatReply => ({
  toolCalls: [{ name, arguments: args }],
  usage,
  hang: false,
});

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

/**
 * The quickstart's spec with `budget` on its `investigate` stage, written into `dir` (its seed an
 * absolute path there); returns the file.
 */
export function budgetedSpec(dir: string, budget: Record<string, unknown>): string {
  const spec = JSON.parse(readFileSync(SPEC, 'utf8')) as {
    workspaceSeed: string;
    stages: Array<{ name: string; budget?: unknown }>;
  };
  spec.workspaceSeed = resolve(dirname(SPEC), spec.workspaceSeed);
  for (const stage of spec.stages) if (stage.name === 'investigate') stage.budget = budget;
  const file = join(dir, 'budgeted-task.json');
  writeFileSync(file, JSON.stringify(spec));
  return file;
}
