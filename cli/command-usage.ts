import { GLOBAL_FLAGS, type Command, type Flag, type Program } from './command.js';

const WIDTH = 100;

/**
 * A flag is required when its schema refuses its absence; its default is what the schema makes of
 * it. A lazy schema is not built for the usage (that would load zod): its flag says both.
 */
export function absent(flag: Flag): { required: boolean; fallback: unknown } {
  if (typeof flag.schema === 'function') return { required: flag.required ?? false, fallback: flag.fallback };
  const parsed = flag.schema.safeParse(undefined);
  return parsed.success ? { required: false, fallback: parsed.data } : { required: true, fallback: undefined };
}

function synopsisItem(name: string, flag: Flag): string {
  const item = flag.type === 'string' ? `--${name} ${flag.value ?? 'VALUE'}` : `--${name}`;
  return absent(flag).required ? item : `[${item}]`;
}

/** Joins words into lines of at most WIDTH columns, continuation lines indented by `indent`. */
function wrap(first: string, words: string[], indent: number): string {
  const lines = [first];
  for (const word of words) {
    const last = lines[lines.length - 1]!;
    if (last.length + 1 + word.length > WIDTH && last.trim().length > 0) lines.push(' '.repeat(indent) + word);
    else lines[lines.length - 1] = `${last} ${word}`;
  }
  return lines.join('\n');
}

function items(cmd: Command, globals: boolean): string[] {
  return [
    ...Object.values(cmd.positionals ?? {}).map((p) => p.name),
    ...Object.entries(cmd.flags ?? {})
      .filter(([, f]) => !f.internal)
      .map(([name, f]) => synopsisItem(name, f)),
    ...(globals ? [synopsisItem('state', GLOBAL_FLAGS.state), synopsisItem('json', GLOBAL_FLAGS.json)] : []),
  ];
}

/** `usage: ordivon send TASK_ID EVENT_JSON [--event-id ID] [--state DIR] [--json]`, from the command's definition, wrapped. */
export function commandSynopsis(program: Program, cmd: Command): string {
  const head = `usage: ${program.name} ${cmd.name}`;
  return wrap(head, items(cmd, true), head.length + 1);
}

/** Two aligned columns, `  --port N      what it does`; a left cell wider than `width` puts its text on the next line. */
function table(rows: Array<[string, string]>, width: number): string[] {
  return rows.map(([left, right]) =>
    left.length > width ? `  ${left}\n  ${' '.repeat(width)}  ${right}` : `  ${left.padEnd(width)}  ${right}`,
  );
}

/** The width of the left column: the widest cell, at most 28. */
function widthOf(...groups: Array<Array<[string, string]>>): number {
  return Math.min(Math.max(...groups.flat().map(([left]) => left.length)), 28);
}

/** The usage's rows of the flags a user gives; internal ones (a command's own child processes) are not shown. */
function flagRows(flags: Readonly<Record<string, Flag>>): Array<[string, string]> {
  return Object.entries(flags)
    .filter(([, flag]) => !flag.internal)
    .map(([name, flag]) => {
      const { fallback } = absent(flag);
      const left = `${flag.short ? `-${flag.short}, ` : ''}--${name}${flag.type === 'string' ? ` ${flag.value ?? 'VALUE'}` : ''}`;
      const notes = flag.type === 'string' && fallback !== undefined ? [`default ${String(fallback)}`] : [];
      return [left, `${flag.description}${notes.length ? ` (${notes.join('; ')})` : ''}`];
    });
}

/** `ordivon <command> --help`: the synopsis, what the command does, each argument and flag with one line. */
export function commandUsage(program: Program, cmd: Command): string {
  const positionals = Object.values(cmd.positionals ?? {}).map((p): [string, string] => [p.name, p.description]);
  const flags = flagRows(cmd.flags ?? {});
  const globals = flagRows(GLOBAL_FLAGS);
  const width = widthOf(positionals, flags, globals);
  return [
    commandSynopsis(program, cmd),
    '',
    cmd.summary,
    ...(cmd.details ?? []),
    ...(positionals.length ? ['', 'arguments:', ...table(positionals, width)] : []),
    ...(flags.length ? ['', 'flags:', ...table(flags, width)] : []),
    '',
    'global flags:',
    ...table(globals, width),
    ...(program.footer?.length ? ['', ...program.footer] : []),
  ].join('\n');
}

/** `ordivon task --help`: the subcommands of a group, each with its synopsis and summary. */
export function groupUsage(program: Program, group: string, commands: readonly Command[]): string {
  return [
    `usage: ${program.name} ${group} <subcommand> [arguments] [flags]`,
    '',
    'subcommands:',
    ...commands.flatMap((cmd) => [
      wrap(`  ${cmd.name}`, items(cmd, false), cmd.name.length + 3),
      `      ${cmd.summary}`,
    ]),
    '',
    `(${program.name} ${group} <subcommand> --help says what each flag does)`,
  ].join('\n');
}

/** `ordivon --help`: every command's synopsis and summary, the global flags, the footer. */
export function programUsage(program: Program): string {
  const example = program.commands.find((c) => c.name === 'list')?.name ?? program.commands[0]?.name ?? '<command>';
  return [
    program.title,
    '',
    `usage: ${program.name} <command> [arguments] [flags]`,
    `       ${program.name} <command> --help       one command's usage (also: ${program.name} help <command>)`,
    '',
    'commands:',
    ...program.commands.flatMap((cmd) => [
      wrap(`  ${cmd.name}`, items(cmd, false), cmd.name.length + 3),
      `      ${cmd.summary}`,
    ]),
    '',
    `global flags, anywhere on the line (${program.name} --state DIR ${example} = ${program.name} ${example} --state DIR):`,
    ...table(flagRows(GLOBAL_FLAGS), widthOf(flagRows(GLOBAL_FLAGS))),
    ...(program.footer?.length ? ['', ...program.footer] : []),
  ].join('\n');
}
