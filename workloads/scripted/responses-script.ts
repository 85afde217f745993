import { z } from 'zod';

/**
 * SCRIPTED MODEL — the data language of the loopback Responses-API model that stands in for an
 * LLM behind a real `codex app-server`. A script is a list of steps; each model request is
 * answered by exactly one step, chosen deterministically from the request body alone.
 */
export const ScriptUsage = z.object({
  input_tokens: z.number().int().nonnegative(),
  cached_tokens: z.number().int().nonnegative().default(0),
  output_tokens: z.number().int().nonnegative(),
  reasoning_tokens: z.number().int().nonnegative().default(0),
});
export type ScriptUsage = z.output<typeof ScriptUsage>;
export type ScriptUsageIn = z.input<typeof ScriptUsage>;

/** Matches the previous tool output: every given condition must hold. */
export const ToolOutputMatch = z.object({
  exitCode: z.number().int().optional(),
  outputIncludes: z.string().optional(),
  /** A regular expression source, tested against the tool's output text. */
  outputMatches: z.string().optional(),
});
export type ToolOutputMatch = z.infer<typeof ToolOutputMatch>;

export type ResponsesStep =
  /** A shell command Codex runs with its `exec_command` tool (argv items are shell-quoted). */
  | {
      type: 'shell';
      command: string | string[];
      workdir?: string | undefined;
      /** Ask to run outside the sandbox (`sandbox_permissions: require_escalated`): Codex then requests approval. */
      escalate?: { justification: string } | undefined;
      /** How long Codex waits for output before yielding with the command still running. */
      yieldTimeMs?: number | undefined;
      usage?: ScriptUsageIn | undefined;
    }
  /** Any other function call by tool name, e.g. `request_user_input`. */
  | { type: 'tool'; name: string; arguments: Record<string, unknown>; usage?: ScriptUsageIn | undefined }
  /** A final assistant message: ends the turn. */
  | { type: 'message'; text: string; usage?: ScriptUsageIn | undefined }
  /** Opens the SSE stream and never completes it (a stuck provider; the turn waits until interrupted). */
  | { type: 'hang' }
  /** An HTTP error instead of a stream (e.g. 400 → failed turn, 500 → internal server error). */
  | { type: 'http_error'; status: number; message: string }
  /** The first case whose `when` matches the previous tool output, else `otherwise`. */
  | { type: 'choose'; cases: { when: ToolOutputMatch; step: ResponsesStep }[]; otherwise: ResponsesStep };

export const ResponsesStep: z.ZodType<ResponsesStep> = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.object({
      type: z.literal('shell'),
      command: z.union([z.string().min(1), z.array(z.string()).min(1)]),
      workdir: z.string().optional(),
      escalate: z.object({ justification: z.string().min(1) }).optional(),
      yieldTimeMs: z.number().int().positive().optional(),
      usage: ScriptUsage.optional(),
    }),
    z.object({
      type: z.literal('tool'),
      name: z.string().min(1),
      arguments: z.record(z.string(), z.unknown()),
      usage: ScriptUsage.optional(),
    }),
    z.object({ type: z.literal('message'), text: z.string(), usage: ScriptUsage.optional() }),
    z.object({ type: z.literal('hang') }),
    z.object({ type: z.literal('http_error'), status: z.number().int().min(400).max(599), message: z.string() }),
    z.object({
      type: z.literal('choose'),
      cases: z.array(z.object({ when: ToolOutputMatch, step: ResponsesStep })),
      otherwise: ResponsesStep,
    }),
  ]),
) as z.ZodType<ResponsesStep>;

/**
 * What a step function sees: the step's position and what the previous tool returned. `B` is the
 * request body of the server's API (Responses by default; the Gemini and Anthropic servers pass theirs).
 */
export interface StepContext<B = ResponsesRequestBody> {
  /** How many model outputs (tool calls and assistant messages) the conversation already holds. */
  index: number;
  lastToolOutput: ToolOutput | undefined;
  /** The parsed request body (lenient). */
  body: B;
}

/** A step as data, or a function choosing one (for scripts that need more than `choose`). */
export type ScriptEntry<B = ResponsesRequestBody> = ResponsesStep | ((context: StepContext<B>) => ResponsesStep);

export interface ToolOutput {
  callId: string;
  output: string;
  /** Parsed from the tool's exit-code line (`exitCodeIn`), when present. */
  exitCode: number | undefined;
}

/**
 * The exit code a shell tool reports in its output text, as each agent words it: Codex
 * `Process exited with code N`, gemini-cli `Exit Code: N`, Claude Code `Exit code N`.
 */
export function exitCodeIn(output: string): number | undefined {
  const code = /(?:Process exited with code|Exit Code:?)\s*(-?\d+)/i.exec(output)?.[1];
  return code === undefined ? undefined : Number(code);
}

const InputItem = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
  call_id: z.string().optional(),
  output: z.unknown().optional(),
});

/** The part of a Responses-API request the script reads. Unknown fields pass through. */
export const ResponsesRequestBody = z.looseObject({
  model: z.string().optional(),
  input: z.array(InputItem).default([]),
});
export type ResponsesRequestBody = z.infer<typeof ResponsesRequestBody>;

const MODEL_OUTPUT_TYPES = new Set(['function_call', 'custom_tool_call', 'local_shell_call']);

/**
 * Which step answers this request: the number of model outputs already in the conversation.
 * Codex resends the whole history each time, so this depends on the body only, never on how many
 * requests this server has seen (a retry gets the same answer).
 */
export function stepIndex(body: ResponsesRequestBody): number {
  return body.input.filter(
    (item) => MODEL_OUTPUT_TYPES.has(item.type ?? '') || (item.type === 'message' && item.role === 'assistant'),
  ).length;
}

/** A tool output as text: a string as it is, text parts joined, anything else as JSON. */
export function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return output
      .map((part) => (typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : ''))
      .join('');
  }
  return output === undefined ? '' : JSON.stringify(output);
}

/** Every tool output in the request, oldest first. */
export function toolOutputs(body: ResponsesRequestBody): ToolOutput[] {
  return body.input
    .filter((item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
    .map((item) => {
      const output = outputText(item.output);
      return { callId: item.call_id ?? '', output, exitCode: exitCodeIn(output) };
    });
}

/** True when every condition of `when` holds for the previous tool output (none: false). */
export function toolOutputMatches(when: ToolOutputMatch, last: ToolOutput | undefined): boolean {
  if (last === undefined) return false;
  if (when.exitCode !== undefined && last.exitCode !== when.exitCode) return false;
  if (when.outputIncludes !== undefined && !last.output.includes(when.outputIncludes)) return false;
  if (when.outputMatches !== undefined && !new RegExp(when.outputMatches).test(last.output)) return false;
  return true;
}

/** Resolves functions and `choose` steps down to the concrete step that answers the request. */
export function resolveStep<B>(
  entry: ScriptEntry<B>,
  context: StepContext<B>,
): Exclude<ResponsesStep, { type: 'choose' }> {
  let step = typeof entry === 'function' ? entry(context) : entry;
  while (step.type === 'choose') {
    step = step.cases.find((c) => toolOutputMatches(c.when, context.lastToolOutput))?.step ?? step.otherwise;
  }
  return step;
}
