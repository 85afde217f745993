import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HarnessConfig } from '../../frontier/harness-config.js';
import { ACP_AGENTS, agentCommand, defaultAgentsDir } from '../../drivers/acp/acp-agents.js';
import { loadAgentRecipes, scriptedAgentLaunch } from '../../drivers/acp/agent-recipe.js';
import { opencodeCommand, opencodeEnv } from '../../drivers/acp/opencode.js';
import { startAnthropicModel } from '../../workloads/scripted/anthropic-model.js';
import { startChatModel, type ChatModel, type ChatReply } from '../../workloads/scripted/chat-model.js';
import { startGeminiModel } from '../../workloads/scripted/gemini-model.js';
import { scriptedCodexLaunch } from '../../workloads/scripted/responses-codex.js';
import { startResponsesModel, type ScriptedModel } from '../../workloads/scripted/responses-model.js';
import type { ResponsesStep } from '../../workloads/scripted/responses-script.js';
import type { TaskSpecInput } from '../../objects/index.js';
import { optionalPart, type OptionalPart } from '../support/optional-part.js';

/**
 * The six real agents the two-stage Task runs on, each behind a scripted loopback model of its
 * own API that calls the agent's own shell and write tools. The models stand in for an LLM only:
 * the agents, the Host, its Runtime and its driver pool are real.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RECIPES = loadAgentRecipes(join(ROOT, 'examples', 'agents.config.json')).harnesses;

export type Stage = 'investigate' | 'fix';

/** The two-stage Task every agent runs (a user's spec: a workload they wrote, their artifacts). */
export const TWO_STAGE_TASK = {
  title: 'Durations with milliseconds fail to parse',
  goal: 'The frozen tests of the duration parser in the workspace fail for durations with milliseconds. Find out why, fix src/duration.js without touching test/, and report.',
  requiredArtifacts: [
    {
      name: 'findings.json',
      kind: 'json',
      schema: {
        type: 'object',
        required: ['failing', 'cause'],
        properties: {
          failing: { type: 'array', minItems: 1, items: { type: 'string' } },
          cause: { type: 'string', minLength: 10 },
        },
      },
    },
    { name: 'report.md', kind: 'text', maxBytes: 4000, pattern: '^# ' },
  ],
  stages: [
    {
      name: 'investigate',
      instructions: 'Run the tests and find the cause. Change no file; write findings.json.\n\n{{stage.artifacts}}',
      produces: ['findings.json'],
    },
    {
      name: 'fix',
      instructions:
        'Fix src/duration.js as the findings say, run the tests, write report.md.\n\n{{evidence:findings.json}}',
      produces: ['report.md'],
      proposesCompletion: true,
    },
  ],
  result: 'report.md',
  acceptance: { command: 'node', args: ['--test', 'test/'], frozenTests: ['test/duration.test.js'] },
  workspaceSeed: join(ROOT, 'workloads', 'duration-v1', 'repo'),
} satisfies TaskSpecInput;

// No backslash and no double quote inside the strings: the JSON holds no escapes, so an agent's
// write tool has nothing to "correct", and the bytes retained are exactly these.
export const FINDINGS_TEXT =
  JSON.stringify(
    {
      failing: ['milliseconds', 'every unit at once', 'minutes then milliseconds'],
      cause: "the unit alternation (h|m|s|ms) in src/duration.js tries 'm' before 'ms', so 250ms reads as minutes",
    },
    null,
    2,
  ) + '\n';
export const REPORT_TEXT = '# Milliseconds parse again\n\nThe unit alternation now tries `ms` first; all tests pass.\n';
/** The fix: in sed's basic regular expressions `(` and `|` are literal. No `$(` (gemini-cli refuses it). */
export const FIX_COMMAND = "sed -i 's/(h|m|s|ms)/(ms|h|m|s)/' src/duration.js";
export const fixSource = (source: string) => source.replace('(h|m|s|ms)', '(ms|h|m|s)');

/** How a stage's steps are said in one agent's tools. */
interface Tools<S> {
  shell(command: string): S;
  write(path: string, content: string): S;
  say(text: string): S;
  /** The agent's command for running the tests, when `node --test test/` cannot run in its shell. */
  runTests?: string;
}

/** How the agents run the tests: the acceptance command as it is. */
const RUN_TESTS = 'node --test test/';

function stageScript<S>(stage: Stage, workspace: string, tools: Tools<S>): S[] {
  const tests = tools.runTests ?? RUN_TESTS;
  if (stage === 'investigate')
    return [
      tools.shell(`${tests} 2>&1 | grep -E "^not ok|^# (pass|fail)"`),
      tools.write(join(workspace, 'findings.json'), FINDINGS_TEXT),
      tools.say('Findings are in findings.json.'),
    ];
  return [
    tools.shell(FIX_COMMAND),
    tools.shell(`${tests} 2>&1 | grep -E "^# (pass|fail)"`),
    tools.write(join(workspace, 'report.md'), REPORT_TEXT),
    tools.say('Fixed src/duration.js; report.md written.'),
  ];
}

const call = (name: string, args: Record<string, unknown>): ResponsesStep => ({ type: 'tool', name, arguments: args });
const say = (text: string): ResponsesStep => ({ type: 'message', text });
/** Codex's only tool is its shell: a write is `printf` of the exact bytes. */
const codexTools: Tools<ResponsesStep> = {
  shell: (command) => ({ type: 'shell', command }),
  write: (path, content) => ({ type: 'shell', command: ['sh', '-c', 'printf %s "$0" > "$1"', content, path] }),
  say,
};
/**
 * `codex app-server` runs its shell in the `workspace-write` sandbox (the codex driver's fixed
 * choice), whose seccomp filter refuses `shutdown(2)`; Node's spawn with piped stdio calls it, so a
 * Node child process fails EPERM and `node --test` reports the test file failed without running
 * it. The test file runs in one process there. (codex-acp's recipe asks for
 * `danger-full-access`, so it runs the acceptance command as the others do.)
 */
const sandboxedCodexTools: Tools<ResponsesStep> = { ...codexTools, runTests: 'node test/duration.test.js' };

export interface RealAgent {
  /** The harness name, as `assignment.commit` names it. */
  name: string;
  /** Absent for the agents that are devDependencies (always installed). */
  part?: OptionalPart;
  /**
   * Starts the stage's scripted model and returns the harness pointing the agent at it, with a
   * throwaway home.
   */
  harness(stage: Stage, workspace: string, home: string): Promise<{ config: HarnessConfig; model: StageModel }>;
}

/** A stage's scripted model as the test reads it afterwards. */
export interface StageModel {
  /** What the agent's tools returned to the model, in the order the requests carried them (repeats removed). */
  toolOutputs(): string[];
  /** Requests the script did not answer (it had run out, or no such route): an agent that went off script. */
  unanswered(): string[];
  close(): Promise<void>;
}

/**
 * claude-agent-acp turns Claude Code's prompt suggestions on (`promptSuggestions: true`): once a
 * turn has ended, Claude Code may ask the model what the user would type next. That request is
 * no step of the turn (the script's `exhausted` answer serves it), and whether it arrives before
 * the driver stops the agent is a race, so it is left out rather than counted.
 */
function promptSuggestion(body: unknown): boolean {
  const last = (body as { messages?: Array<{ role?: string; content?: unknown }> }).messages?.at(-1);
  return last?.role === 'user' && typeof last.content === 'string' && last.content.startsWith('[SUGGESTION MODE');
}

function agentModel(model: ScriptedModel): StageModel {
  return {
    toolOutputs: () => [...new Set(model.requests.flatMap((r) => r.toolOutputs.map((o) => o.output)))],
    unanswered: () =>
      model.requests
        .filter((r) => r.exhausted || r.answeredWith === 'not_found' || r.answeredWith === 'bad_request')
        .filter((r) => !(r.exhausted && promptSuggestion(r.body)))
        .map((r) => `${r.path}: ${r.exhausted ? 'exhausted' : r.answeredWith}`),
    close: () => model.close(),
  };
}

/** opencode's chat model: tool results are `role: tool` messages; an extra turn is answered `script_exhausted`. */
function chatModel(model: ChatModel, turns: number): StageModel {
  const messages = (body: unknown) => (body as { messages?: Array<{ role?: string; content?: unknown }> }).messages;
  return {
    toolOutputs: () => [
      ...new Set(
        model.requests.flatMap((r) =>
          (messages(r.body) ?? []).filter((m) => m.role === 'tool').map((m) => JSON.stringify(m.content)),
        ),
      ),
    ],
    unanswered: () =>
      model.requests
        .filter((r) => (r.kind === 'other' && !r.path.endsWith('/v1/models')) || (r.turn ?? 0) >= turns)
        .map((r) => `${r.path}: ${r.kind} ${r.turn ?? ''}`),
    close: () => model.close(),
  };
}

const TIMEOUT_MS = 240_000;

/** A recipe of examples/agents.config.json, made concrete with only its model endpoint swapped. */
function acpAgent(
  name: string,
  start: (script: ResponsesStep[]) => Promise<ScriptedModel>,
  tools: Tools<ResponsesStep>,
): RealAgent {
  const agent = ACP_AGENTS[RECIPES[name]!.command];
  const found = agent ? agentCommand(agent, defaultAgentsDir()) : undefined;
  return {
    name,
    part: optionalPart(name, found?.ok ? found.command : undefined, 'run npm run agents:install'),
    async harness(stage, workspace, home) {
      const model = await start(stageScript(stage, workspace, tools));
      const launch = scriptedAgentLaunch(RECIPES[name], { modelUrl: model.url, home });
      if (!launch.ok) {
        await model.close();
        throw new Error(`${name}: ${launch.code} ${launch.detail}`);
      }
      const { command, args, env, clientFs, readable, writable } = launch.value;
      return {
        config: {
          driver: 'acp',
          ...{ command, args, env, clientFs, readable, writable },
          approvals: 'accept',
          timeoutMs: TIMEOUT_MS,
        },
        model: agentModel(model),
      };
    },
  };
}

const opencodeUsage = { prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050 };
const opencodeTool = (name: string, args: Record<string, unknown>): ChatReply => ({
  toolCalls: [{ name, arguments: args }],
  usage: opencodeUsage,
  hang: false,
});

export const REAL_AGENTS: RealAgent[] = [
  {
    name: 'codex',
    async harness(stage, workspace, home) {
      const model = await startResponsesModel({ script: stageScript(stage, workspace, sandboxedCodexTools) });
      const config: HarnessConfig = { driver: 'codex', ...scriptedCodexLaunch({ modelUrl: model.url, home }) };
      return { config: { ...config, timeoutMs: TIMEOUT_MS }, model: agentModel(model) };
    },
  },
  {
    name: 'opencode',
    async harness(stage, workspace, home) {
      const turns = stageScript<ChatReply>(stage, workspace, {
        shell: (command) => opencodeTool('bash', { command, description: 'Run a command' }),
        write: (filePath, content) => opencodeTool('write', { filePath, content }),
        say: (text) => ({ text, toolCalls: [], usage: opencodeUsage, hang: false }),
      });
      const model = await startChatModel({ script: { turns } });
      const env = opencodeEnv({ home, modelUrl: model.url, permission: 'ask' });
      return {
        // The stage's scripted shell steps would be asked of a person under the default policy.
        config: {
          driver: 'acp',
          ...opencodeCommand(),
          env,
          writable: [home],
          approvals: 'accept',
          timeoutMs: TIMEOUT_MS,
        },
        model: chatModel(model, turns.length),
      };
    },
  },
  acpAgent('codex-acp', (script) => startResponsesModel({ script }), codexTools),
  acpAgent('gemini', (script) => startGeminiModel({ script }), {
    shell: (command) => call('run_shell_command', { command }),
    write: (file_path, content) => call('write_file', { file_path, content }),
    say,
  }),
  acpAgent('claude-code', (script) => startAnthropicModel({ script }), {
    shell: (command) => call('Bash', { command, description: 'Run a command' }),
    write: (file_path, content) => call('mcp__acp__Write', { file_path, content }),
    say,
  }),
  // claude-agent-acp starts sessions in Claude Code's `auto` permission mode (no `defaultMode` in
  // the settings): no `session/request_permission`, a security-monitor call to the model judges
  // each non-read-only command instead and blocks it unless the answer is `<severity>N</severity>`
  // below 50. The scripted model gives the verdict a model would give a test run in the workspace.
  acpAgent('claude-agent', (script) => startAnthropicModel({ script, sideText: '<severity>5</severity>' }), {
    shell: (command) => call('Bash', { command, description: 'Run a command' }),
    write: (file_path, content) => call('Write', { file_path, content }),
    say,
  }),
];
