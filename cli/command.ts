import type { z } from 'zod';
import type { Io } from './cli-io.js';

/** The zod module, as `import('zod')` gives it to a lazy schema. */
export type Zod = typeof z;

/**
 * A value's zod schema, or a function that builds it from zod (`(z) => z.string().min(1)`), or
 * loads it (`async () => (await import('…')).TaskId`): the parser calls it once, after it has
 * loaded zod, so a command table of lazy schemas loads no zod for `--help` or `--version`.
 */
export type Schema<S extends z.ZodType = z.ZodType> = S | ((zod: Zod) => S | Promise<S>);
/** The schema a `Schema` is or builds. */
export type Built<T> = T extends (zod: Zod) => infer R ? Awaited<R> : T;

/**
 * One flag of a command: its node:util parseArgs type, its line in the usage, and the zod schema
 * its value is parsed with (what the command line gave: the string of a string flag, `true` for a
 * boolean flag, `undefined` when absent). A flag whose schema refuses `undefined` is required.
 */
export interface Flag<S extends z.ZodType = z.ZodType> {
  readonly type: 'string' | 'boolean';
  /** The value's placeholder in the usage: `--port N`. String flags only. */
  readonly value?: string;
  readonly short?: string;
  /** One line for the usage. */
  readonly description: string;
  readonly schema: Schema<S>;
  /**
   * What the usage says of a lazy schema, which it does not build: the flag must be given (its
   * schema refuses absence), and the value its schema gives it when absent (`(default …)`).
   * test/cli/startup-modules.test.ts holds them to what the schemas do.
   */
  readonly required?: boolean;
  readonly fallback?: string;
  /** Left out of the usage and the synopsis (still parsed): flags a command passes to its own child processes. */
  readonly internal?: boolean;
}

/** One positional argument of a command, in the order of its key in `positionals`. */
export interface Positional<S extends z.ZodType = z.ZodType> {
  /** Its name in the usage: `TASK_ID`. */
  readonly name: string;
  readonly description: string;
  readonly schema: Schema<S>;
}

export type Flags = Readonly<Record<string, Flag>>;
export type Positionals = Readonly<Record<string, Positional>>;
type Parsed<T extends Readonly<Record<string, { schema: Schema }>>> = {
  -readonly [K in keyof T]: z.output<Built<T[K]['schema']>>;
};

const built = new WeakMap<object, z.ZodType>();

/** A flag's or positional's schema, built from `zod` the first time it is asked for (then kept). */
export async function schemaOf(field: { schema: Schema }, zod: Zod): Promise<z.ZodType> {
  const { schema } = field;
  if (typeof schema !== 'function') return schema;
  const known = built.get(schema);
  if (known) return known;
  const made = await schema(zod);
  built.set(schema, made);
  return made;
}

/** Options of a string flag: `internal`, and what the usage says of a lazy schema (`Flag`). */
export interface StringFlagOptions {
  internal?: boolean;
  required?: boolean;
  fallback?: string;
}
type None = Record<never, never>;

/** A boolean flag (`--fresh`): false unless given. */
export function booleanFlag(
  description: string,
  options: { short?: string; internal?: boolean } = {},
): Flag<z.ZodDefault<z.ZodBoolean>> {
  return { type: 'boolean', description, schema: booleanSchema, ...options };
}

const booleanSchema = (zod: Zod) => zod.boolean().default(false);
const textSchema = (zod: Zod) => zod.string().optional();

/** A string flag (`--state DIR`), optional and any text unless `schema` says otherwise. */
export function stringFlag(value: string, description: string): Flag<z.ZodOptional<z.ZodString>>;
export function stringFlag<S extends z.ZodType>(
  value: string,
  description: string,
  schema: Schema<S>,
  options?: StringFlagOptions,
): Flag<S>;
export function stringFlag(
  value: string,
  description: string,
  schema: Schema = textSchema,
  options: StringFlagOptions = {},
): Flag {
  return { type: 'string', value, description, schema, ...options };
}

/** A positional argument (`TASK_ID`): any text unless `schema` says otherwise. */
export function positional(name: string, description: string): Positional<z.ZodString>;
export function positional<S extends z.ZodType>(name: string, description: string, schema: Schema<S>): Positional<S>;
export function positional(name: string, description: string, schema: Schema = (zod) => zod.string()): Positional {
  return { name, description, schema };
}

/** Flags every command takes, anywhere on the command line (`ordivon --state DIR list`, `ordivon list --state DIR`). */
export const GLOBAL_FLAGS = {
  state: stringFlag('DIR', 'the state root (else ORDIVON_STATE, else ./.ordivon)', (z) =>
    z.string().min(1, 'must not be empty').optional(),
  ),
  json: booleanFlag('answer with JSON: the result on stdout, an error as {"error": {"code", "message", …}} on stderr'),
  'allow-shared-root': booleanFlag(
    'open a state root other local accounts may enter (group or other mode bits), as it is (else ORDIVON_ALLOW_SHARED_ROOT=1; else state_root_shared, exit 2)',
  ),
  help: booleanFlag('print the usage (of the command, when one is named) and exit 0', { short: 'h' }),
  version: booleanFlag("print ordivon's version and exit 0", { short: 'V' }),
} as const;

/** What a command's handler receives: every flag and positional parsed by its schema, the global flags included. */
export type Args<F extends Flags = None, P extends Positionals = None> = Parsed<typeof GLOBAL_FLAGS> &
  Parsed<F> &
  Parsed<P>;

/** One command: its name, usage and flags (help and parsing both come from here) and its handler. */
export interface Command<F extends Flags = Flags, P extends Positionals = Positionals> {
  /** One or two words: `list`, `task create`. */
  readonly name: string;
  /** One line for the program's usage. */
  readonly summary: string;
  /** More lines for the command's own usage. */
  readonly details?: readonly string[];
  readonly positionals?: P;
  readonly flags?: F;
  /** Runs the command; returns the exit code. Throws a CliError to answer with a code. */
  run(args: Args<F, P>, io: Io): Promise<number>;
}

/** Defines a command (an identity function: it infers the handler's argument types from the flags). */
export function command<const F extends Flags = None, const P extends Positionals = None>(
  definition: Command<F, P>,
): Command<F, P> {
  return definition;
}

/** A program: its name, its title line, its commands (in usage order) and the lines closing its usage. */
export interface Program {
  readonly name: string;
  readonly title: string;
  readonly commands: readonly Command[];
  readonly footer?: readonly string[];
}
