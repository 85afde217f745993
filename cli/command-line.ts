import { parseArgs } from 'node:util';
import { CliError, EXIT, type Io } from './cli-io.js';
import {
  GLOBAL_FLAGS,
  schemaOf,
  type Args,
  type Command,
  type Flag,
  type Flags,
  type Positional,
  type Positionals,
  type Program,
  type Schema,
} from './command.js';
import { commandSynopsis, commandUsage, groupUsage, programUsage } from './command-usage.js';

/**
 * What a command line asks for. `json` says whether `--json` was given (also when parsing failed);
 * `allowSharedRoot` whether `--allow-shared-root` was.
 */
export type CommandLine =
  | { kind: 'usage'; json: boolean; text: string }
  | { kind: 'version'; json: boolean }
  | { kind: 'run'; json: boolean; allowSharedRoot: boolean; command: Command; run(io: Io): Promise<number> }
  | { kind: 'error'; json: boolean; error: CliError };

const usage = (message: string, path?: string) => new CliError('usage', message, { exit: EXIT.usage, path });

/** parseArgs's options for the whole program: every command's flags, so a value is never taken for a command word. */
function programOptions(program: Program): Record<string, { type: 'string' | 'boolean'; short?: string }> {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  const all: Array<[string, Flag]> = [
    ...Object.entries(GLOBAL_FLAGS),
    ...program.commands.flatMap((c) => Object.entries(c.flags ?? {})),
  ];
  for (const [name, flag] of all) {
    const option = { type: flag.type, ...(flag.short ? { short: flag.short } : {}) };
    const seen = options[name];
    if (seen && (seen.type !== option.type || seen.short !== option.short))
      throw new Error(`${program.name}: --${name} is defined twice with different types`);
    options[name] = option;
  }
  for (const c of program.commands)
    for (const key of Object.keys(c.positionals ?? {}))
      if (Object.hasOwn(GLOBAL_FLAGS, key) || Object.hasOwn(c.flags ?? {}, key))
        throw new Error(`${program.name} ${c.name}: argument ${key} has the name of a flag`);
  return options;
}

/**
 * `--only[1]`: a flag or positional, and where inside its value a zod issue is (`path` as
 * `zodIssue` gives it: `(root)` for the value itself, else its segments joined with `.`; a flag's
 * value is a string or a list of them, whose segments are indexes).
 */
function label(name: string, path: string): string {
  return path === '(root)'
    ? name
    : name +
        path
          .split('.')
          .map((p) => `[${p}]`)
          .join('');
}

/** A `--flag` or `-f` as parseArgs's tokens give it. */
interface OptionToken {
  name: string;
  rawName: string;
  value: string | undefined;
  inlineValue: boolean | undefined;
}

/**
 * Parses a command line with node:util parseArgs (tokens, positionals allowed) against the
 * program's table, then checks every flag against its command and every value with its zod
 * schema. Global flags and command flags may come anywhere, before or after the command words;
 * `--help`/`-h` (or `PROGRAM help COMMAND`) asks for the usage. An unknown flag, a missing value,
 * a wrong number of arguments or a value its schema refuses is a `usage` error naming the flag.
 * A usage or the version is answered before zod is loaded; each lazy schema is built once.
 */
export async function parseCommandLine(program: Program, argv: string[]): Promise<CommandLine> {
  const { tokens } = parseArgs({
    args: argv,
    options: programOptions(program),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const options = tokens.flatMap((t) => (t.kind === 'option' ? [t] : []));
  const words = tokens.flatMap((t) => (t.kind === 'positional' ? [t.value] : []));
  const json = options.some((t) => t.name === 'json');
  const help = options.some((t) => t.name === 'help');
  const fail = (error: CliError, hint?: string) => failed(json, error, hint);

  if (argv.length === 0) return fail(usage('no command given'), programUsage(program));
  if (options.some((t) => t.name === 'version')) return { kind: 'version', json };
  if (words[0] === 'help') return helpCommand(program, words.slice(1), json);
  const cmd = commandOf(program, words);
  if (!cmd) return noCommand(program, words, help, json);
  if (help) return { kind: 'usage', json, text: commandUsage(program, cmd) };

  const hint = `${commandSynopsis(program, cmd)}\n(${program.name} ${cmd.name} --help says what each one does)`;
  const flags: Flags = { ...GLOBAL_FLAGS, ...cmd.flags };
  const raw = rawFlags(cmd, flags, options);
  if (raw instanceof CliError) return fail(raw, hint);
  const given = words.slice(cmd.name.split(' ').length);
  const wanted = Object.entries(cmd.positionals ?? {});
  const miscounted = argumentCountError(cmd, given, wanted);
  if (miscounted) return fail(miscounted, hint);
  const args = await parsedArgs(flags, raw, wanted, given);
  if (args instanceof CliError) return fail(args, hint);
  return {
    kind: 'run',
    json,
    allowSharedRoot: args['allow-shared-root'] === true,
    command: cmd,
    run: (io) => cmd.run(args as Args<Flags, Positionals>, io),
  };
}

/** The `error` answer; the hint (the usage, or where to find it) follows the error in its human form, on stderr. */
function failed(json: boolean, error: CliError, hint?: string): CommandLine {
  return {
    kind: 'error',
    json,
    error: hint
      ? new CliError(error.code, error.message, { exit: error.exit, path: error.path, notes: [hint] })
      : error,
  };
}

/** The command the first two words name, else the first word alone, else undefined. */
function commandOf(program: Program, words: string[]): Command | undefined {
  const named = (count: number) => {
    const name = words.slice(0, count).join(' ');
    return words.length >= count ? program.commands.find((c) => c.name === name) : undefined;
  };
  return named(2) ?? named(1);
}

/** `PROGRAM help [COMMAND…]`: the program's usage, or the asked command's. */
function helpCommand(program: Program, asked: string[], json: boolean): CommandLine {
  if (asked.length === 0) return { kind: 'usage', json, text: programUsage(program) };
  const target = program.commands.find((c) => c.name === asked.join(' '));
  if (!target)
    return failed(
      json,
      usage(`unknown command ${JSON.stringify(asked.join(' '))}`),
      `${program.name} --help lists the commands`,
    );
  return { kind: 'usage', json, text: commandUsage(program, target) };
}

/** Words that name no command: the usage asked for with `--help`, else a `usage` error saying what is missing. */
function noCommand(program: Program, words: string[], help: boolean, json: boolean): CommandLine {
  if (words.length === 0 && help) return { kind: 'usage', json, text: programUsage(program) };
  // A group's word alone (`ordivon task`) or with a subcommand it lacks: its subcommands.
  const group = program.commands.filter((c) => c.name.startsWith(`${words[0]} `));
  if (group.length > 0) {
    const text = groupUsage(program, words[0]!, group);
    if (words.length === 1 && help) return { kind: 'usage', json, text };
    const what =
      words.length === 1
        ? `${JSON.stringify(words[0]!)} needs a subcommand`
        : `unknown command ${JSON.stringify(`${words[0]!} ${words[1]!}`)}`;
    return failed(json, usage(what), text);
  }
  const what = words.length === 0 ? 'no command given' : `unknown command ${JSON.stringify(words[0]!)}`;
  return failed(json, usage(what), `${program.name} --help lists the commands`);
}

/** Each given flag's text (`true` for a boolean), or the `usage` error of the first the command does not take as given. */
function rawFlags(cmd: Command, flags: Flags, options: OptionToken[]): Record<string, string | boolean> | CliError {
  const raw: Record<string, string | boolean> = {};
  for (const t of options) {
    const flag = Object.hasOwn(flags, t.name) ? flags[t.name] : undefined;
    const shown = t.rawName.startsWith('--') ? t.rawName : `${t.rawName} (--${t.name})`;
    if (!flag) return usage(`unknown flag ${t.rawName} for ${JSON.stringify(cmd.name)}`);
    if (flag.type === 'boolean') {
      if (t.value !== undefined) return usage(`${shown}: takes no value`, `--${t.name}`);
      raw[t.name] = true;
    } else if (t.value === undefined) {
      return usage(`${shown}: needs a value (${t.rawName} ${flag.value})`, `--${t.name}`);
    } else if (!t.inlineValue && /^--?[A-Za-z]/.test(t.value)) {
      // `--event-id --json`: a flag where the value should be; `--event-id=--json` passes it as the value.
      return usage(
        `${shown}: needs a value; got the flag ${t.value} (write ${t.rawName}=${t.value} if it is the value)`,
        `--${t.name}`,
      );
    } else {
      raw[t.name] = t.value;
    }
  }
  return raw;
}

/** The `usage` error for fewer or more arguments than the command takes, else undefined. */
function argumentCountError(cmd: Command, given: string[], wanted: Array<[string, Positional]>) {
  if (given.length < wanted.length) {
    const missing = wanted.slice(given.length).map(([, p]) => p.name);
    return usage(`missing ${missing.join(' ')} for ${JSON.stringify(cmd.name)}`);
  }
  if (given.length > wanted.length)
    return usage(`unexpected argument ${JSON.stringify(given[wanted.length])} for ${JSON.stringify(cmd.name)}`);
  return undefined;
}

/** Every flag and argument parsed with its schema, or the `usage` error naming the first value refused. */
async function parsedArgs(
  flags: Flags,
  raw: Record<string, string | boolean>,
  wanted: Array<[string, Positional]>,
  given: string[],
): Promise<Record<string, unknown> | CliError> {
  const [{ z: zod }, { zodIssue }] = await Promise.all([import('zod'), import('../base/index.js')]);
  const args: Record<string, unknown> = {};
  const fields: Array<[key: string, name: string, field: { schema: Schema }, input: unknown]> = [
    ...Object.entries(flags).map(([key, f]): [string, string, Flag, unknown] => [key, `--${key}`, f, raw[key]]),
    ...wanted.map(([key, p], i): [string, string, { schema: Schema }, unknown] => [key, p.name, p, given[i]]),
  ];
  for (const [key, name, field, input] of fields) {
    const parsed = (await schemaOf(field, zod)).safeParse(input);
    if (!parsed.success) {
      const issue = zodIssue('usage', parsed.error);
      const where = label(name, issue.path);
      return usage(`${where}: ${issue.message}`, where);
    }
    args[key] = parsed.data;
  }
  return args;
}
