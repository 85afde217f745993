// Every command imports this file, so it imports no other layer's values but base/'s two leaves
// without zod: `ordivon --help` loads the command table and nothing of the Host (the commands
// load what they use when they run; a spec file is read by ./spec-file.ts).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { CodedError, type CodedErrorOptions } from '../base/coded-error.js';
import { zodIssue } from '../base/zod-issue.js';
import type { ProgressListener, RecoveryProgress } from '../recovery/index.js';
import type { StoreErrorCode } from '../store/index.js';
import type { ApiErrorCode } from './service/http-io.js';
import { errorAnswer } from './error-answer.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Exit codes of the `ordivon` CLI; stable. */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** Codes the CLI adds to those of the layers it reports (docs/errors.md). */
export const CLI_ERROR_CODES = [
  'usage',
  'invalid_json',
  'spec_unreadable',
  'config_unreadable',
  'demo_failed',
  'listen_failed',
  'inspector_missing',
  'backup_exists',
  'backup_invalid',
  'restore_not_empty',
  'service_unreachable',
  'service_error',
  'service_not_running',
  'package_missing',
  'no_outcome',
  'workspace_changed',
  'seed_changed',
  'not_a_repository',
  'repo_dirty',
  'repo_mismatch',
  'branch_exists',
  'git_failed',
  'export_exists',
  'token_file_shared',
  'token_file_invalid',
  'internal',
] as const;
/** What the CLI reports: its own codes, the control API's (which include the Host's) and the store's. */
export type CliErrorCode = (typeof CLI_ERROR_CODES)[number] | ApiErrorCode | StoreErrorCode;

export interface CliErrorOptions extends CodedErrorOptions {
  /** The exit code (default 1; 2: the input was malformed). */
  exit?: number | undefined;
  /** More fields of the `--json` error object, beside `code`, `message` and `path` (a failed boot's `findings`). */
  details?: Record<string, unknown> | undefined;
  /** More lines after `ordivon: code: message` in the human form (the usage, the Task a refusal left). */
  notes?: readonly string[] | undefined;
}

/** An error the CLI reports with a code and exits on; `exit` 2 means the input was malformed. */
export class CliError extends CodedError<CliErrorCode> {
  readonly exit: number;
  readonly details: Record<string, unknown>;
  readonly notes: readonly string[];

  constructor(code: CliErrorCode, message: string, options: CliErrorOptions = {}) {
    super(code, message, options);
    this.exit = options.exit ?? EXIT.failed;
    this.details = options.details ?? {};
    this.notes = options.notes ?? [];
  }
}

/**
 * Codes that exit 2 wherever a command meets them: a state root other local accounts may enter is
 * refused like a bad flag, before anything is read or written, and the fix is the operator's
 * (`chmod 700`, or `--allow-shared-root`).
 */
const USAGE_CODES: ReadonlySet<string> = new Set(['state_root_shared', 'confinement_unavailable']);

/**
 * A lower layer's error (Host, store, control API) as the CLI reports it: same code, message, path
 * and retryability; exit `options.exit` (default 1), but 2 for `state_root_shared` and `confinement_unavailable`.
 */
export function cliErrorOf(
  error: CodedError<CliErrorCode>,
  options: Pick<CliErrorOptions, 'exit' | 'details' | 'notes'> = {},
): CliError {
  return new CliError(error.code, error.message, {
    ...options,
    ...(USAGE_CODES.has(error.code) ? { exit: EXIT.usage } : {}),
    path: error.path,
    retryable: error.retryable,
    cause: error,
  });
}

/** Where a refused or retained input left its Task: the fields a Task refusal adds to the error object. */
export interface TaskRefusal {
  taskId: string;
  /** The Task's state and revision after the refusal (a retained input's own revision). */
  state: string;
  revision: number;
  /** True when the input was kept in the Task's journal as a rejected event (retained); false: nothing written. */
  written: boolean;
}

/**
 * A refusal that concerns a Task (`send`, `decide`, the service's answer to either): its code, its
 * detail as the message, the field it is about, and the Task's `taskId`, `state`, `revision` and
 * `written` in the error object. Exit 1, or 2 for `invalid_event` (malformed input, nothing written).
 */
export function taskRefusal(
  code: string,
  message: string,
  task: TaskRefusal,
  options: { path?: string | undefined; details?: Record<string, unknown> } = {},
): CliError {
  const { taskId, state, revision, written } = task;
  // The code is the Host's rejection reason (a string in SendResult), one of docs/errors.md's codes.
  return new CliError(code as CliErrorCode, message, {
    exit: code === 'invalid_event' || code === 'invalid_request' ? EXIT.usage : EXIT.failed,
    path: options.path,
    details: { taskId, state, revision, written, ...options.details },
    notes: [
      `${written ? 'retained' : 'refused'}${options.path ? ` at ${options.path}` : ''}: task ${taskId} is ${state} at revision ${revision}${written ? ' (the input is kept in its journal as a rejected event)' : ' (nothing written)'}`,
    ],
  });
}

/** The one JSON shape of every CLI error: `{"error": {code, message, path?, ...details}}` (docs/cli.md). */
export function errorDocument(error: CliError): { error: Record<string, unknown> } {
  return { error: { ...errorAnswer(error), ...error.details } };
}

/**
 * Prints an error on stderr, the only place errors go: with `--json` the document of
 * `errorDocument` on one line (stderr's last line, after any progress or log lines), else
 * `ordivon: code: message` and the error's notes. stdout stays empty.
 */
export function printError(io: Io, error: CliError): void {
  io.err(
    io.json
      ? JSON.stringify(errorDocument(error))
      : [`ordivon: ${error.code}: ${error.message}`, ...error.notes].join('\n'),
  );
}

export interface Io {
  json: boolean;
  /** stdout: what a command produced, and nothing else. */
  out(text: string): void;
  /** stderr: errors, refusals, progress. */
  err(text: string): void;
}

/** Prints a result on stdout: JSON as one document with `--json`, otherwise the human form. Errors go through `printError`. */
export function emit(io: Io, value: unknown, human: () => string): void {
  io.out(io.json ? JSON.stringify(value, null, 2) : human());
}

/**
 * A report that is the command's result when nothing failed (stdout, exit 0) and, when `failure`
 * says what failed, that error (exit 1, stderr): the report's fields in the error object, its
 * human form after the error line. For `doctor` and `demo`, whose failures are their findings.
 */
export function emitReport(
  io: Io,
  value: Record<string, unknown>,
  human: () => string,
  failure?: { code: CliErrorCode; message: string },
): number {
  if (failure) throw new CliError(failure.code, failure.message, { details: value, notes: [human()] });
  emit(io, value, human);
  return EXIT.ok;
}

/**
 * `text` without a leading byte-order mark: editors on Windows save JSON with one, and JSON.parse
 * refuses it, though the file is otherwise what the docs show.
 */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Parses JSON from an argument or file (a leading BOM ignored), answering `invalid_json` (exit 2) with where it failed. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(withoutBom(text));
  } catch (error) {
    throw new CliError('invalid_json', `${what} is not JSON: ${(error as Error).message}`, {
      exit: EXIT.usage,
      cause: error,
    });
  }
}

/**
 * Options of a standalone script (`npm run bench`, the history generator, `npm run torture`):
 * `node:util` parseArgs (strict, no positionals), then `schema`. A bad option is a `usage`
 * result naming it (`--rounds: Too small: …`); the caller prints it and exits 2 before doing anything.
 */
export function parseScriptArgs<S extends z.ZodType>(
  argv: string[],
  options: Options,
  schema: S,
): { ok: true; args: z.output<S> } | { ok: false; code: 'usage'; message: string } {
  let raw: unknown;
  try {
    raw = parseArgs({ args: argv, options, strict: true }).values;
  } catch (error) {
    return { ok: false, code: 'usage', message: (error as Error).message };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, args: parsed.data };
  const { code, path, message } = zodIssue('usage', parsed.error);
  return { ok: false, code, message: `--${path}: ${message}` };
}

/** `parseScriptArgs` for a script's entry point: exits 2 with the usage on a bad option, 0 after printing it for `--help`. */
export function scriptArgsOrExit<S extends z.ZodType>(
  name: string,
  usage: string,
  argv: string[],
  options: Options,
  schema: S,
): z.output<S> {
  const result = parseScriptArgs(argv, { ...options, help: { type: 'boolean', short: 'h' } }, schema);
  if (!result.ok) {
    console.error(`${name}: ${result.code}: ${result.message}\n${usage}`);
    process.exit(EXIT.usage);
  }
  if ((result.args as { help?: boolean }).help) {
    console.log(usage);
    process.exit(EXIT.ok);
  }
  return result.args;
}

/** A count for people: `1,000,000`. */
export function count(value: number): string {
  return value.toLocaleString('en-US');
}

/** One progress report as text: `4,120 of 10,000 Tasks, 412,000 of 1,000,000 events (41%)`. */
export function progressText(progress: RecoveryProgress): string {
  const { tasks, totalTasks, events, totalEvents } = progress;
  const eventsPart =
    totalEvents === undefined
      ? `${count(events)} events`
      : `${count(events)} of ${count(totalEvents)} events (${totalEvents > 0 ? Math.floor((100 * events) / totalEvents) : 100}%)`;
  return `${count(tasks)} of ${count(totalTasks)} Tasks, ${eventsPart}`;
}

/**
 * A progress listener for a terminal: writes `prefix` and the report at most once every
 * `everyMs` by `now` (a clock, injectable), the first one `everyMs` after it was made — so a
 * short run prints nothing.
 */
export function throttledProgress(
  write: (line: string) => void,
  prefix: string,
  now: () => number = () => performance.now(),
  everyMs = 2000,
): ProgressListener {
  let next = now() + everyMs;
  return (progress) => {
    const at = now();
    if (at < next) return;
    next = at + everyMs;
    write(prefix + progressText(progress));
  };
}
