import {
  resolveStep,
  ScriptUsage,
  type ScriptUsageIn,
  type ResponsesStep,
  type ScriptEntry,
  type StepContext,
} from './responses-script.js';
import { shellJoin } from './responses-sse.js';
import type { RecordedRequest } from './responses-model.js';

/**
 * SCRIPTED MODEL — what the loopback servers of the Gemini and Anthropic APIs share: the same
 * script language as the Responses model (`ResponsesStep`: `tool` calls one of the agent's own
 * tools by its name, `message` ends the turn, `shell` calls the API's usual shell tool, plus
 * `choose`, `hang`, `http_error`), the step chosen from the conversation in the request body.
 */
export type ModelTurn =
  | { type: 'call'; name: string; arguments: Record<string, unknown>; usage: ScriptUsage }
  | { type: 'text'; text: string; usage: ScriptUsage }
  | { type: 'hang' }
  | { type: 'http_error'; status: number; message: string };

/** How a `shell` step becomes a call of the agent's shell tool (gemini `run_shell_command`, Claude `Bash`). */
export type ShellTool = (command: string) => { name: string; arguments: Record<string, unknown> };

export interface AgentModelOptions<B> {
  script: readonly ScriptEntry<B>[];
  /** Answer once the script has run out (e.g. an adapter's extra tool-offering request); default: a labelled message. */
  exhausted?: ResponsesStep;
  /** Usage reported for steps that give none. */
  defaultUsage?: ScriptUsage;
}

/** The server every API module returns. */
export interface AgentModel {
  /** Base URL in the form the agent's endpoint variable takes (no version path). */
  url: string;
  /** Every request received, in arrival order (live array). */
  requests: RecordedRequest[];
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

export const AGENT_DEFAULT_USAGE: ScriptUsage = {
  input_tokens: 100,
  cached_tokens: 0,
  output_tokens: 10,
  reasoning_tokens: 0,
};
/** Usage of a side request (a title, a classifier): small, so a receipt's totals show the turns. */
export const SIDE_USAGE: ScriptUsage = { input_tokens: 10, cached_tokens: 0, output_tokens: 2, reasoning_tokens: 0 };
const EXHAUSTED: ResponsesStep = { type: 'message', text: 'scripted model: script exhausted' };

/**
 * Resolves the step for `context.index` (functions and `choose` included) into the turn to send.
 * A `shell` step's Codex-only fields (`workdir`, `escalate`, `yieldTimeMs`) have no meaning for
 * these agents' tools: they throw, which the server answers with HTTP 500 naming the field.
 */
export function turnFor<B>(
  options: AgentModelOptions<B>,
  context: StepContext<B>,
  shellTool: ShellTool,
): { step: Exclude<ResponsesStep, { type: 'choose' }>; turn: ModelTurn; exhausted?: true } {
  const step = resolveStep(options.script[context.index] ?? options.exhausted ?? EXHAUSTED, context);
  const turn = turnOf(step, shellTool, options.defaultUsage ?? AGENT_DEFAULT_USAGE);
  return context.index >= options.script.length ? { step, turn, exhausted: true } : { step, turn };
}

function turnOf(
  step: Exclude<ResponsesStep, { type: 'choose' }>,
  shellTool: ShellTool,
  fallback: ScriptUsage,
): ModelTurn {
  const usage = (u: ScriptUsageIn | undefined) => (u === undefined ? fallback : ScriptUsage.parse(u));
  switch (step.type) {
    case 'hang':
    case 'http_error':
      return step;
    case 'message':
      return { type: 'text', text: step.text, usage: usage(step.usage) };
    case 'tool':
      return { type: 'call', name: step.name, arguments: step.arguments, usage: usage(step.usage) };
    case 'shell': {
      for (const field of ['workdir', 'escalate', 'yieldTimeMs'] as const) {
        if (step[field] !== undefined) throw new Error(`shell step field '${field}' is Codex-only; use a 'tool' step`);
      }
      const command = typeof step.command === 'string' ? step.command : shellJoin(step.command);
      return { type: 'call', ...shellTool(command), usage: usage(step.usage) };
    }
  }
}
