import { parseArgs } from 'node:util';
import { CliError, EXIT, type Io } from './cli-io.js';
import {
  GLOBAL_FLAGS,
  schemaOf,
  type Args,
  type Command,
  type Flag,
  type Flags,
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
  const words = tokens.flatMap((t) => (t.kind === 'positional' ? [t] : []));
  const json = options.some((t) => t.name === 'json');
  const help = options.some((t) => t.name === 'help');
  // The hint (the usage, or where to find it) follows the error in its human form, on stderr.
  const fail = (error: CliError, hint?: string): CommandLine => ({
    kind: 'error',
    json,
    error: hint
      ? new CliError(error.code, error.message, { exit: error.exit, path: error.path, notes: [hint] })
      : error,
  });
  const named = (count: number) => {
    const name = words
      .slice(0, count)
      .map((w) => w.value)
      .join(' ');
    return words.length >= count ? program.commands.find((c) => c.name === name) : undefined;
  };

  if (argv.length === 0) return fail(usage('no command given'), programUsage(program));
  if (options.some((t) => t.name === 'version')) return { kind: 'version', json };
  if (words[0]?.value === 'help') {
    const asked = words.slice(1).map((w) => w.value);
    if (asked.length === 0) return { kind: 'usage', json, text: programUsage(program) };
    const target = program.commands.find((c) => c.name === asked.join(' '));
    if (!target)
      return fail(
        usage(`unknown command ${JSON.stringify(asked.join(' '))}`),
        `${program.name} --help lists the commands`,
      );
    return { kind: 'usage', json, text: commandUsage(program, target) };
  }
  const cmd = named(2) ?? named(1);
  if (!cmd) {
    if (words.length === 0 && help) return { kind: 'usage', json, text: programUsage(program) };
    // A group's word alone (`ordivon task`) or with a subcommand it lacks: its subcommands.
    const group = program.commands.filter((c) => c.name.startsWith(`${words[0]?.value} `));
    if (group.length > 0) {
      const text = groupUsage(program, words[0]!.value, group);
      if (words.length === 1 && help) return { kind: 'usage', json, text };
      const what =
        words.length === 1
          ? `${JSON.stringify(words[0]!.value)} needs a subcommand`
          : `unknown command ${JSON.stringify(`${words[0]!.value} ${words[1]!.value}`)}`;
      return fail(usage(what), text);
    }
    const what = words.length === 0 ? 'no command given' : `unknown command ${JSON.stringify(words[0]!.value)}`;
    return fail(usage(what), `${program.name} --help lists the commands`);
  }
  if (help) return { kind: 'usage', json, text: commandUsage(program, cmd) };

  const hint = `${commandSynopsis(program, cmd)}\n(${program.name} ${cmd.name} --help says what each one does)`;
  const flags: Flags = { ...GLOBAL_FLAGS, ...cmd.flags };
  const raw: Record<string, string | boolean> = {};
  for (const t of options) {
    const flag = Object.hasOwn(flags, t.name) ? flags[t.name] : undefined;
    const shown = t.rawName.startsWith('--') ? t.rawName : `${t.rawName} (--${t.name})`;
    if (!flag) return fail(usage(`unknown flag ${t.rawName} for ${JSON.stringify(cmd.name)}`), hint);
    if (flag.type === 'boolean') {
      if (t.value !== undefined) return fail(usage(`${shown}: takes no value`, `--${t.name}`), hint);
      raw[t.name] = true;
    } else if (t.value === undefined) {
      return fail(usage(`${shown}: needs a value (${t.rawName} ${flag.value})`, `--${t.name}`), hint);
    } else if (!t.inlineValue && /^--?[A-Za-z]/.test(t.value)) {
      // `--event-id --json`: a flag where the value should be; `--event-id=--json` passes it as the value.
      return fail(
        usage(
          `${shown}: needs a value; got the flag ${t.value} (write ${t.rawName}=${t.value} if it is the value)`,
          `--${t.name}`,
        ),
        hint,
      );
    } else {
      raw[t.name] = t.value;
    }
  }
  const given = words.slice(cmd.name.split(' ').length).map((w) => w.value);
  const wanted = Object.entries(cmd.positionals ?? {});
  if (given.length < wanted.length) {
    const missing = wanted.slice(given.length).map(([, p]) => p.name);
    return fail(usage(`missing ${missing.join(' ')} for ${JSON.stringify(cmd.name)}`), hint);
  }
  if (given.length > wanted.length)
    return fail(
      usage(`unexpected argument ${JSON.stringify(given[wanted.length])} for ${JSON.stringify(cmd.name)}`),
      hint,
    );

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
      return fail(usage(`${where}: ${issue.message}`, where), hint);
    }
    args[key] = parsed.data;
  }
  return {
    kind: 'run',
    json,
    allowSharedRoot: args['allow-shared-root'] === true,
    command: cmd,
    run: (io) => cmd.run(args as Args<Flags, Positionals>, io),
  };
}
