import type { HarnessFactory } from '../../frontier/index.js';
import {
  round1CodexSteps,
  round1HermesLikeScript,
  round1OpencodeScript,
  type Round1Behaviour,
  type Round1Choices,
} from './behaviours.js';
import { scriptedLaunchers, type AcpAgent, type ScriptedHarnesses } from '../shared/harnesses.js';

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
  /** Another world's wording of some choices (continuation on World W1). */
  choices?: Round1Choices;
}): ScriptedHarnesses {
  const launch = scriptedLaunchers(options.timeoutMs);
  const prepare = async (a: Parameters<HarnessFactory>[0]) => {
    const run: Round1Run = {
      taskId: a.taskId,
      stage: a.stage,
      generation: a.generation,
      contextDigest: a.contextDigest,
    };
    await options.before?.(run);
    return {
      behaviour: options.behaviourOf(run),
      contextDigest: run.contextDigest,
      ...(options.choices ? { choices: options.choices } : {}),
    };
  };
  const codex: HarnessFactory = async (a) => {
    const { behaviour, ...step } = await prepare(a);
    return launch.codex(round1CodexSteps(behaviour, step));
  };
  const hermes: HarnessFactory = async (a) => {
    const { behaviour, ...step } = await prepare(a);
    if (options.acpAgent === 'hermes-like') return launch.hermesLike(round1HermesLikeScript(behaviour, step));
    return launch.opencode(round1OpencodeScript(behaviour, step));
  };
  return { harnesses: { codex, hermes }, close: () => launch.close() };
}
