import { z } from 'zod';
import type { ToolCall, ToolSpec } from './conversation.js';
import { editFile } from './tools/edit-file.js';
import { finish } from './tools/finish.js';
import { listFiles } from './tools/list-files.js';
import { cut, refused, type Tool, type ToolContext, type ToolName, type ToolOutcome } from './tools/outcome.js';
import { readFile } from './tools/read-file.js';
import { runCommand } from './tools/run-command.js';
import { search } from './tools/search.js';
import { writeFile } from './tools/write-file.js';

export type { ToolContext, ToolName, ToolOutcome } from './tools/outcome.js';

/** Every tool of Loop v0, by name; each is defined once, in its own file, and all else derives from it. */
const TOOLS = {
  list_files: listFiles,
  read_file: readFile,
  search,
  write_file: writeFile,
  edit_file: editFile,
  run_command: runCommand,
  finish,
} satisfies Record<ToolName, Tool<z.ZodType>>;

function toolNamed(name: string): Tool<z.ZodType> | undefined {
  return Object.hasOwn(TOOLS, name) ? TOOLS[name as ToolName] : undefined;
}

/** The tools as the model is offered them: each input's JSON Schema, derived from its zod schema. */
export const LOOP_TOOLS: readonly ToolSpec[] = Object.values(TOOLS).map((tool: Tool<z.ZodType>) => {
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(tool.input, { io: 'input' });
  return { name: tool.name, description: tool.description, parameters };
});

/** The tools that change nothing (list_files, read_file, search): safe to run again after a crash. */
export const READ_ONLY_TOOLS: ReadonlySet<ToolName> = new Set(
  Object.values(TOOLS)
    .filter((tool: Tool<z.ZodType>) => tool.readOnly)
    .map((tool) => tool.name),
);

/** The model's arguments as the tool's input, or tool_input_invalid naming the first bad field. */
function parseInput(
  tool: Tool<z.ZodType>,
  text: string,
): { ok: true; input: unknown } | { ok: false; outcome: ToolOutcome } {
  let json: unknown;
  try {
    // Some endpoints send '' for a call without arguments.
    json = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    const outcome = refused(
      'tool_input_invalid',
      `${tool.name}: the arguments are not JSON (${(error as Error).message})`,
    );
    return { ok: false, outcome: { ...outcome, path: '' } };
  }
  const parsed = tool.input.safeParse(json);
  if (parsed.success) return { ok: true, input: parsed.data };
  const where = (path: readonly PropertyKey[]): string => path.map(String).join('.');
  const issues = parsed.error.issues.map((issue) => `${where(issue.path) || '(the arguments)'}: ${issue.message}`);
  const outcome = refused('tool_input_invalid', `${tool.name}: invalid arguments\n${issues.join('\n')}`);
  return { ok: false, outcome: { ...outcome, path: where(parsed.error.issues[0]?.path ?? []) } };
}

/**
 * Runs one tool call in `ctx.workspace` and says what came of it. Never rejects: an unknown tool,
 * bad arguments, a refused path and an unexpected I/O error (`tool_failed`) all come back as an
 * outcome the model is told, and its output is never longer than `ctx.maxOutputChars` (where a
 * note saying so fits).
 */
export async function runTool(call: ToolCall, ctx: ToolContext): Promise<ToolOutcome> {
  const tool = toolNamed(call.name);
  if (tool === undefined)
    return refused(
      'tool_unknown',
      `there is no tool ${JSON.stringify(call.name)}; the tools are ${Object.keys(TOOLS).join(', ')}`,
    );
  const parsed = parseInput(tool, call.arguments);
  if (!parsed.ok) return parsed.outcome;
  let outcome: ToolOutcome;
  try {
    outcome = await tool.run(parsed.input, ctx);
  } catch (error) {
    outcome = refused('tool_failed', `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return outcome.output.length > ctx.maxOutputChars
    ? { ...outcome, output: cut(outcome.output, ctx.maxOutputChars, 'head') }
    : outcome;
}
