// Every command imports this file, so it imports no other layer's values but leaves (base/, the
// spec's size limit): `ordivon --help` loads the command table and nothing of the Host (the
// commands load what they use when they run).
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { CodedError, zodIssue, type CodedErrorOptions } from '../base/index.js';
import { SPEC_MAX_BYTES, TaskSpec } from '../objects/task-spec.js';
import type { ProgressListener, RecoveryProgress } from '../recovery/index.js';
import type { StoreErrorCode } from '../store/index.js';
import type { ApiErrorCode } from './service/http-io.js';

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
  'internal',
] as const;
/** What the CLI reports: its own codes, the control API's (which include the Host's) and the store's. */
export type CliErrorCode = (typeof CLI_ERROR_CODES)[number] | ApiErrorCode | StoreErrorCode;

export interface CliErrorOptions extends CodedErrorOptions {
  /** The exit code (default 1; 2: the input was malformed). */
  exit?: number | undefined;
  /** More fields of the `--json` answer (a failed boot's `findings`). */
  details?: Record<string, unknown> | undefined;
}

/** An error the CLI reports with a code and exits on; `exit` 2 means the input was malformed. */
export class CliError extends CodedError<CliErrorCode> {
  readonly exit: number;
  readonly details: Record<string, unknown>;

  constructor(code: CliErrorCode, message: string, options: CliErrorOptions = {}) {
    super(code, message, options);
    this.exit = options.exit ?? EXIT.failed;
    this.details = options.details ?? {};
  }
}

/** A lower layer's error (Host, store, control API) as the CLI reports it: same code, message, path and retryability. */
export function cliErrorOf(
  error: CodedError<CliErrorCode>,
  options: Pick<CliErrorOptions, 'exit' | 'details'> = {},
): CliError {
  return new CliError(error.code, error.message, {
    ...options,
    path: error.path,
    retryable: error.retryable,
    cause: error,
  });
}

export interface Io {
  json: boolean;
  out(text: string): void;
  err(text: string): void;
}

/** Prints a result: JSON as one document with `--json`, otherwise the human form. */
export function emit(io: Io, value: unknown, human: () => string): void {
  io.out(io.json ? JSON.stringify(value, null, 2) : human());
}

/** Parses JSON from an argument or file, answering `invalid_json` (exit 2) with where it failed. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
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

/** The spec's fields as help lists them: the keys of the schema that parses it (docs/stages.md describes each). */
export const SPEC_FIELDS_HELP = `The spec's fields: ${Object.keys(TaskSpec.shape).join(', ')}; an unknown key is invalid_spec.`;

/**
 * Reads a Task spec file as the CLI takes it: `spec_unreadable` (path `--spec`), `invalid_spec`
 * (path `--spec`) for a file over `SPEC_MAX_BYTES`, found before it is read, or `invalid_json`
 * (exit 2). A relative `workspaceSeed` or `world` names a directory beside the spec file, as a
 * user writing the spec next to their repository means it, and is made absolute here.
 */
export function readSpecFile(file: string): unknown {
  let text: string;
  try {
    const { size } = statSync(file);
    if (size > SPEC_MAX_BYTES)
      throw new CliError(
        'invalid_spec',
        `${file} holds ${size} bytes; a spec may hold at most ${SPEC_MAX_BYTES} (1 MiB)`,
        {
          exit: EXIT.usage,
          path: '--spec',
        },
      );
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError('spec_unreadable', `cannot read ${file}: ${(error as Error).message}`, {
      exit: EXIT.usage,
      path: '--spec',
      cause: error,
    });
  }
  const raw = parseJson(text, file);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const resolved: Record<string, unknown> = { ...raw };
  for (const field of ['workspaceSeed', 'world']) {
    const dir = resolved[field];
    if (typeof dir === 'string' && dir !== '' && !isAbsolute(dir))
      resolved[field] = resolve(dirname(resolve(file)), dir);
  }
  return resolved;
}
