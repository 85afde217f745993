import type { z } from 'zod';
import type { SandboxSpec } from '../../receipt.js';

/** The tools Loop v0 offers a model. */
export type ToolName = 'list_files' | 'read_file' | 'search' | 'write_file' | 'edit_file' | 'run_command' | 'finish';

/** Where and how the tools of one run act. */
export interface ToolContext {
  /** Absolute path of the workspace: every path a tool takes is relative to it and must stay inside it. */
  workspace: string;
  /** The sandbox run_command runs in (drivers/receipt.ts SandboxSpec); absent: unconfined. */
  sandbox?: SandboxSpec | undefined;
  /** The command's environment (exactly this, plus PATH when missing). */
  env: Record<string, string>;
  signal: AbortSignal;
  commandTimeoutMs: number;
  graceMs: number;
  /** A tool's output is cut to this many characters, saying how much was cut. */
  maxOutputChars: number;
}

/** What one tool call came to: what the model is told, and for the loop, how it ended. */
export interface ToolOutcome {
  ok: boolean;
  /** What the model is told. */
  output: string;
  /** Why it failed or was refused, when !ok: tool_unknown, tool_input_invalid, path_escape, symlink_escape, file_missing, not_a_file, file_too_large, edit_no_match, edit_ambiguous, command_timeout, command_aborted, command_spawn_failed, … */
  code?: string;
  /** For tool_input_invalid: the zod path of the bad field, e.g. "path". */
  path?: string;
  /** Set by `finish`: the run's end as the model declared it. */
  finish?: { summary: string };
  /** run_command only. */
  exitCode?: number | null;
}

/** One tool: its input schema (the model's JSON Schema derives from it) and what it does. */
export interface Tool<S extends z.ZodType> {
  name: ToolName;
  description: string;
  input: S;
  /** Safe to run again after a crash: it changes nothing. */
  readOnly: boolean;
  // A method, so a tool of a narrower input still fits a table of tools.
  run(input: z.output<S>, ctx: ToolContext): ToolOutcome | Promise<ToolOutcome>;
}

export function tool<S extends z.ZodType>(definition: Tool<S>): Tool<S> {
  return definition;
}

/** `n` and `noun`, plural unless `n` is 1: "1 line", "3 lines". */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function refused(code: string, output: string): ToolOutcome {
  return { ok: false, code, output };
}

export function done(output: string): ToolOutcome {
  return { ok: true, output };
}

/**
 * `text` cut to at most `max` characters where it can be (a marker alone may be longer), saying how
 * many were cut: keeping its head (a file's start, a listing) or its head and tail (a command's
 * output, whose end holds the error).
 */
export function cut(text: string, max: number, keep: 'head' | 'head-and-tail'): string {
  if (text.length <= max) return text;
  // The marker's own length depends on the count it states: grow the count until they agree.
  let dropped = text.length - max;
  let marker = `\n[… ${dropped} characters cut …]\n`;
  for (;;) {
    const next = Math.min(text.length, text.length - max + marker.length);
    if (next === dropped) break;
    dropped = next;
    marker = `\n[… ${dropped} characters cut …]\n`;
  }
  const kept = text.length - dropped;
  if (keep === 'head') return text.slice(0, kept) + marker;
  const head = Math.ceil(kept / 2);
  return text.slice(0, head) + marker + text.slice(text.length - (kept - head));
}
