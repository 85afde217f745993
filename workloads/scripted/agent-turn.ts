import {
  resolveStep,
  ScriptUsage,
  type ScriptUsageIn,
  type ResponsesStep,
  type StepContext,
} from './responses-script.js';
import { shellJoin } from './responses-sse.js';
import { DEFAULT_USAGE, EXHAUSTED_STEP, type ScriptedModelOptions } from './responses-model.js';

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

/** Usage of a side request (a title, a classifier): small, so a receipt's totals show the turns. */
export const SIDE_USAGE: ScriptUsage = { input_tokens: 10, cached_tokens: 0, output_tokens: 2, reasoning_tokens: 0 };

/**
 * Resolves the step for `context.index` (functions and `choose` included) into the turn to send.
 * A `shell` step's Codex-only fields (`workdir`, `escalate`, `yieldTimeMs`) have no meaning for
 * these agents' tools: they throw, which the server answers with HTTP 500 naming the field.
 */
export function turnFor<B>(
  options: ScriptedModelOptions<B>,
  context: StepContext<B>,
  shellTool: ShellTool,
): { step: Exclude<ResponsesStep, { type: 'choose' }>; turn: ModelTurn; exhausted?: true } {
  const step = resolveStep(options.script[context.index] ?? options.exhausted ?? EXHAUSTED_STEP, context);
  const turn = turnOf(step, shellTool, options.defaultUsage ?? DEFAULT_USAGE);
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
