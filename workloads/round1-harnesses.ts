import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HarnessConfig, HarnessFactory } from '../actors/host-effects.js';
import { opencodeCommand, opencodeEnv } from '../drivers/acp/opencode.js';
import { startChatModel } from '../drivers/scripted/chat-model.js';
import { hermesLikeLaunch } from '../drivers/scripted/hermes-script.js';
import { scriptedCodexLaunch } from '../drivers/scripted/responses-codex.js';
import { startResponsesModel } from '../drivers/scripted/responses-model.js';
import {
  round1CodexSteps,
  round1HermesLikeScript,
  round1OpencodeScript,
  type Round1Behaviour,
} from './round1-behaviours.js';
import type { AcpAgent, ScriptedHarnesses } from './scripted-harnesses.js';

/** What the harness factory is told about the run it launches. */
export interface Round1Run {
  taskId: string;
  stage: string;
  generation: number;
  contextDigest: string;
}

/**
 * Harnesses for the round1 demo: `codex` (the REAL `codex app-server`) and `hermes` (the REAL
 * `opencode acp`, or the scripted Hermes-like ACP agent), each pointed at a loopback SCRIPTED
 * model started per run with a throwaway home. `behaviourOf` picks what the model does in each
 * run; `before` is awaited before the provider is launched (the demo's concurrent maintainer
 * finishes its revision there, so the order of the revision and the run is fixed, not raced).
 */
export function round1Harnesses(options: {
  acpAgent: AcpAgent;
  behaviourOf: (run: Round1Run) => Round1Behaviour;
  before?: (run: Round1Run) => Promise<void>;
  timeoutMs?: number;
}): ScriptedHarnesses {
  const homes = mkdtempSync(join(tmpdir(), 'ordivon-round1-providers-'));
  const closers: Array<() => Promise<void>> = [];
  const timeoutMs = options.timeoutMs ?? 180_000;
  let runs = 0;
  const home = () => join(homes, `run-${++runs}`);
  const prepare = async (a: Parameters<HarnessFactory>[0]) => {
    const run: Round1Run = {
      taskId: a.taskId,
      stage: a.stage,
      generation: a.generation,
      contextDigest: a.contextDigest,
    };
    await options.before?.(run);
    return { behaviour: options.behaviourOf(run), contextDigest: run.contextDigest };
  };

  const codex: HarnessFactory = async (a) => {
    const { behaviour, contextDigest } = await prepare(a);
    const model = await startResponsesModel({ script: round1CodexSteps(behaviour, { contextDigest }) });
    closers.push(() => model.close());
    return {
      driver: 'codex',
      ...scriptedCodexLaunch({ modelUrl: model.url, home: home() }),
      timeoutMs,
    } satisfies HarnessConfig;
  };
  const hermes: HarnessFactory = async (a) => {
    const { behaviour, contextDigest } = await prepare(a);
    if (options.acpAgent === 'hermes-like')
      return { driver: 'acp', ...hermesLikeLaunch(round1HermesLikeScript(behaviour, { contextDigest })), timeoutMs };
    const model = await startChatModel({ script: round1OpencodeScript(behaviour, { contextDigest }) });
    closers.push(() => model.close());
    return {
      driver: 'acp',
      ...opencodeCommand(),
      env: opencodeEnv({ home: home(), modelUrl: model.url, permission: 'ask' }),
      timeoutMs,
    };
  };
  return {
    harnesses: { codex, hermes },
    async close() {
      await Promise.all(closers.splice(0).map((c) => c()));
      rmSync(homes, { recursive: true, force: true });
    },
  };
}
