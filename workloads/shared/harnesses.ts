import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HarnessConfig, HarnessFactory } from '../../frontier/index.js';
import { opencodeCommand, opencodeEnv } from '../../drivers/acp/index.js';
import { startChatModel, type ChatModelScriptIn, type ChatReply } from '../scripted/chat-model.js';
import { hermesLikeLaunch, type HermesScriptIn } from '../scripted/hermes-script.js';
import { scriptedCodexLaunch } from '../scripted/responses-codex.js';
import { startResponsesModel } from '../scripted/responses-model.js';
import type { ResponsesStep } from '../scripted/responses-script.js';
import {
  CLAIMED_COMPLETION,
  DIAGNOSIS,
  completion,
  hermesLikeScript,
  type Behaviour,
} from '../hamilton-v1/behaviours.js';
import { loadWorkload, type Workload } from '../../cli/workload.js';

export type { Behaviour };
export type AcpAgent = 'opencode' | 'hermes-like';

/** Picks the scripted behaviour for an Assignment (the demo's scenarios choose per Task and generation). */
export type BehaviourOf = (assignment: { taskId: string; purpose: string; generation: number }) => Behaviour;

const writeJson = (name: string, value: unknown) => [
  'node',
  '-e',
  `require('node:fs').writeFileSync(${JSON.stringify(name)}, ${JSON.stringify(JSON.stringify(value, null, 2) + '\n')})`,
];
const COMPARATOR_FIX = 's/(a, b) => a.remainder - b.remainder/(a, b) => b.remainder - a.remainder/';

/** The real `codex app-server`'s scripted model turns for each behaviour (its shell tool runs them). */
function codexSteps(behaviour: Behaviour): ResponsesStep[] {
  const usage = { input_tokens: 1200, output_tokens: 80 };
  if (behaviour === 'diagnose') {
    return [
      { type: 'shell', command: ['sh', '-c', 'node --test test/ 2>&1 | tail -n 30'], usage },
      { type: 'shell', command: ['sed', '-n', '18,24p', 'src/allocate.js'], usage },
      { type: 'shell', command: writeJson('diagnosis.json', DIAGNOSIS), usage },
      {
        type: 'message',
        text: JSON.stringify({ status: 'diagnosed', artifact: 'diagnosis.json', location: DIAGNOSIS.location }),
        usage,
      },
    ];
  }
  if (behaviour === 'claim-success') {
    return [
      { type: 'shell', command: writeJson('completion.json', CLAIMED_COMPLETION), usage },
      {
        type: 'message',
        text: JSON.stringify({ status: 'repaired', tests: 'passing', artifact: 'completion.json' }),
        usage,
      },
    ];
  }
  return [
    { type: 'shell', command: ['sed', '-i', COMPARATOR_FIX, 'src/allocate.js'], usage },
    { type: 'shell', command: ['sh', '-c', 'node --test test/ 2>&1 | tail -n 12'], usage },
    ...(behaviour === 'repair'
      ? [
          {
            type: 'shell',
            command: writeJson('completion.json', completion('comparator sorts remainders descending')),
            usage,
          } as const,
        ]
      : []),
    {
      type: 'message',
      text: JSON.stringify({
        status: 'repaired',
        tests: 'passing',
        artifact: behaviour === 'repair' ? 'completion.json' : 'none (but all done!)',
      }),
      usage,
    },
  ];
}

/** opencode's scripted chat turns: its own `bash` and `write` tools, files addressed by absolute path. */
function opencodeTurns(behaviour: Behaviour, workspace: string, workload: Workload): ChatReply[] {
  const usage = { prompt_tokens: 900, completion_tokens: 60, total_tokens: 960 };
  const tool = (name: string, args: Record<string, unknown>): ChatReply => ({
    toolCalls: [{ name, arguments: args }],
    usage,
    hang: false,
  });
  if (behaviour === 'diagnose') {
    return [
      tool('bash', { command: 'node --test test/ 2>&1 | tail -n 30', description: 'Run the frozen tests' }),
      tool('write', {
        filePath: join(workspace, 'diagnosis.json'),
        content: JSON.stringify(DIAGNOSIS, null, 2) + '\n',
      }),
      { text: 'Diagnosis written to diagnosis.json.', toolCalls: [], usage, hang: false },
    ];
  }
  if (behaviour === 'claim-success') {
    return [
      tool('write', {
        filePath: join(workspace, 'completion.json'),
        content: JSON.stringify(CLAIMED_COMPLETION, null, 2) + '\n',
      }),
      { text: 'Done: the defect is fixed and all tests pass.', toolCalls: [], usage, hang: false },
    ];
  }
  return [
    tool('write', {
      filePath: join(workspace, 'src/allocate.js'),
      content: workload.file('scripted/hermes-allocate.js'),
    }),
    ...(behaviour === 'repair'
      ? [
          tool('write', {
            filePath: join(workspace, 'completion.json'),
            content: JSON.stringify(completion('exact integer remainders'), null, 2) + '\n',
          }),
        ]
      : []),
    { text: 'Repaired: all tests pass.', toolCalls: [], usage, hang: false },
  ];
}

export interface ScriptedHarnesses {
  /** Harness name → factory: `codex` (real codex app-server) and `hermes` (an ACP agent). */
  harnesses: Record<string, HarnessFactory>;
  /** Stops every scripted model server and removes the throwaway homes. */
  close(): Promise<void>;
}

/** Launch configurations of the real agents, each run against its own loopback scripted model. */
export interface ScriptedLaunchers {
  /** The REAL `codex app-server`, its model replaying `steps`. */
  codex(steps: ResponsesStep[]): Promise<HarnessConfig>;
  /** The REAL `opencode acp`, its model replaying `script`. */
  opencode(script: ChatModelScriptIn): Promise<HarnessConfig>;
  /** The scripted Hermes-like ACP agent (no model). */
  hermesLike(script: HermesScriptIn): HarnessConfig;
  close(): Promise<void>;
}

/**
 * Starts one scripted model server and one throwaway home per run; `close` stops every server and
 * removes the homes. Nothing leaves the machine.
 */
export function scriptedLaunchers(timeoutMs = 180_000): ScriptedLaunchers {
  const homes = mkdtempSync(join(tmpdir(), 'ordivon-providers-'));
  const closers: Array<() => Promise<void>> = [];
  let runs = 0;
  const home = () => join(homes, `run-${++runs}`);
  return {
    async codex(steps) {
      const model = await startResponsesModel({ script: steps });
      closers.push(() => model.close());
      return { driver: 'codex', ...scriptedCodexLaunch({ modelUrl: model.url, home: home() }), timeoutMs };
    },
    async opencode(script) {
      const model = await startChatModel({ script });
      closers.push(() => model.close());
      const runHome = home();
      return {
        driver: 'acp',
        ...opencodeCommand(),
        env: opencodeEnv({ home: runHome, modelUrl: model.url, permission: 'ask' }),
        writable: [runHome],
        // Its scripted `bash` steps are the workload's own, run in the Attempt's workspace; the
        // default policy would ask a person about each command (docs/permissions.md).
        approvals: 'accept',
        timeoutMs,
      };
    },
    hermesLike: (script) => ({ driver: 'acp', ...hermesLikeLaunch(script), timeoutMs }),
    async close() {
      await Promise.all(closers.splice(0).map((c) => c()));
      rmSync(homes, { recursive: true, force: true });
    },
  };
}

/**
 * Harnesses for the demo and the workload tests: the REAL `codex app-server` and the REAL
 * `opencode acp` (or the scripted Hermes-like ACP agent), each pointed at a loopback SCRIPTED
 * model started per run, with a throwaway home. Nothing leaves the machine.
 */
export function scriptedHarnesses(options: {
  workload: Workload;
  acpAgent: AcpAgent;
  behaviourOf: BehaviourOf;
  timeoutMs?: number;
}): ScriptedHarnesses {
  const launch = scriptedLaunchers(options.timeoutMs);
  const codex: HarnessFactory = (a) => launch.codex(codexSteps(options.behaviourOf(a)));
  const hermes: HarnessFactory = (a) => {
    const behaviour = options.behaviourOf(a);
    if (options.acpAgent === 'hermes-like') return launch.hermesLike(hermesLikeScript(options.workload, behaviour));
    return launch.opencode({ turns: opencodeTurns(behaviour, a.workspace, options.workload) });
  };
  return { harnesses: { codex, hermes }, close: () => launch.close() };
}

/** The demo workload's scripted harnesses as a service runs them: each stage's own behaviour. */
export function demoHarnesses(acpAgent: AcpAgent): ScriptedHarnesses {
  return scriptedHarnesses({
    workload: loadWorkload('hamilton-v1'),
    acpAgent,
    behaviourOf: (a) => (a.purpose === 'diagnose' ? 'diagnose' : 'repair'),
  });
}
