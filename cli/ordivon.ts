#!/usr/bin/env node
import { apply } from './commands/apply-command.js';
import { backup, restore } from './commands/backup.js';
import { decide } from './commands/decide.js';
import { requestOpen } from './commands/request.js';
import { diff } from './commands/diff.js';
import { evidence } from './commands/evidence.js';
import { exportTask } from './commands/export.js';
import { graph } from './commands/graph.js';
import { doctor, list, show } from './commands/inspect.js';
import { run } from './commands/run-command.js';
import { serve } from './commands/serve-command.js';
import { send, taskCreate } from './commands/write.js';
import { login } from './commands/login.js';
// Only the command table and the parser load here; each command imports the Host's modules when
// it runs (an installed package's `ordivon --help` loads no store and no agent), and the lab's
// commands load only for a command line that needs them (`commandLine`).
import { isCommitFailure } from '../store/commit-failure.js';
import { ALLOW_SHARED_ROOT_ENV } from '../store/private-root.js';
import { isCodedError, type CodedError } from '../base/coded-error.js';
import { CliError, EXIT, cliErrorOf, printError, type CliErrorCode, type Io } from './cli-io.js';
import type { Command, Program } from './command.js';
import { parseCommandLine, type CommandLine } from './command-line.js';
import { programUsage } from './command-usage.js';
import { registrations } from './extensions.js';
import { packageVersion } from './version.js';

/**
 * The CLI's own commands, in usage order: its flags, usage and handler are one definition
 * (cli/commands/). The registered ones (cli/extensions.ts) go around them: `demo` before
 * (workloads/register.ts), `bench` after (bench/register.ts).
 */
const OWN_COMMANDS: readonly Command[] = [
  run,
  diff,
  exportTask,
  evidence,
  apply,
  taskCreate,
  send,
  decide,
  requestOpen,
  show,
  list,
  doctor,
  backup,
  restore,
  serve,
  login,
  graph,
];

const PROGRAM = {
  name: 'ordivon',
  title: 'ordivon — durable supervisor for agent work',
  footer: [
    'exit codes: 0 ok, 1 refused or failed (the code is printed), 2 malformed input (nothing written), 130 run stopped by SIGINT',
    'results on stdout; errors and refusals on stderr (with --json as {"error": {"code", "message", …}})',
    'state root: --state DIR, else ORDIVON_STATE, else ./.ordivon',
  ],
} as const;

/** The program with the CLI's own commands only: a command line of one of them needs no lab module. */
export const OWN_PROGRAM: Program = { ...PROGRAM, commands: OWN_COMMANDS };

let whole: Promise<Program> | undefined;

/**
 * The whole program, every command in usage order: the registered ones around the CLI's own. A
 * registered command shares no first word with an own one, so it can neither shadow an own command
 * nor change what an own command line means (`commandLine` parses those without the lab).
 */
export function ordivonProgram(): Promise<Program> {
  whole ??= registrations().then((found) => {
    const before = found.flatMap((registration) => registration.commands ?? []);
    const after = found.flatMap((registration) => registration.commandsAfter ?? []);
    const ownWords = new Set(OWN_COMMANDS.map((c) => c.name.split(' ')[0]));
    for (const c of [...before, ...after])
      if (ownWords.has(c.name.split(' ')[0]))
        throw new Error(`a registered command, ${c.name}, takes the word of one of the CLI's own`);
    return { ...PROGRAM, commands: [...before, ...OWN_COMMANDS, ...after] };
  });
  return whole;
}

/**
 * Parses `argv` against the CLI's own commands, which loads no lab module, and again against the
 * whole program only when that answer is not final: an error (the command may be a registered one,
 * and the usage an error prints lists them all) or the program's usage.
 */
async function commandLine(argv: string[]): Promise<CommandLine> {
  const own = await parseCommandLine(OWN_PROGRAM, argv);
  const final =
    own.kind === 'run' || own.kind === 'version' || (own.kind === 'usage' && own.text !== programUsage(OWN_PROGRAM));
  return final ? own : parseCommandLine(await ordivonProgram(), argv);
}

/**
 * Runs the CLI; returns the exit code. Exported for tests that run it in-process. `--json`
 * anywhere on the line (or `io.json`) makes every answer, errors included, one JSON document.
 */
export async function main(argv: string[], io: Io): Promise<number> {
  const line = await commandLine(argv);
  const out: Io = { ...io, json: io.json || line.json };
  try {
    switch (line.kind) {
      case 'usage':
        out.out(line.text);
        return EXIT.ok;
      case 'version':
        out.out(out.json ? JSON.stringify({ name: 'ordivon', version: packageVersion() }) : packageVersion());
        return EXIT.ok;
      case 'error':
        printError(out, line.error);
        return line.error.exit;
      case 'run':
        return await withSharedRootAllowed(line.allowSharedRoot, () => line.run(out));
    }
  } catch (thrown) {
    const error = thrown instanceof CliError ? thrown : (storageFault(thrown) ?? lastResort(thrown));
    printError(out, error);
    return error.exit;
  }
}

/**
 * Runs a command with `--allow-shared-root` as `ORDIVON_ALLOW_SHARED_ROOT=1`, then puts the
 * variable back (tests run commands in-process). The variable, not an option, because every
 * check of a state root reads it, including openHost's own check before its Runtime opens,
 * which takes no option; no provider or acceptance command sees it (they get only the variables
 * their configuration names).
 */
async function withSharedRootAllowed(allow: boolean, run: () => Promise<number>): Promise<number> {
  if (!allow) return run();
  const before = process.env[ALLOW_SHARED_ROOT_ENV];
  process.env[ALLOW_SHARED_ROOT_ENV] = '1';
  try {
    return await run();
  } finally {
    if (before === undefined) delete process.env[ALLOW_SHARED_ROOT_ENV];
    else process.env[ALLOW_SHARED_ROOT_ENV] = before;
  }
}

/**
 * LMDB reports what it cannot do (open an environment, begin a transaction) with a numeric errno
 * or MDB code and no Ordivon code; the CLI answers it `storage_failed` (exit 1) instead of a stack.
 */
function storageFault(error: unknown): CliError | undefined {
  if (!(error instanceof Error) || !('code' in error) || typeof error.code !== 'number') return undefined;
  return new CliError(
    'storage_failed',
    `the state root's LMDB environment failed: ${error.message} (code ${error.code})`,
    {
      cause: error,
    },
  );
}

/**
 * What no command turned into its own answer: a lower layer's coded error keeps its code; anything
 * else is `internal` (exit 1) with its message, so no input reaches a user as a raw stack.
 */
function lastResort(error: unknown): CliError {
  if (isCodedError(error)) return cliErrorOf(error as CodedError<CliErrorCode>);
  const message = error instanceof Error ? error.message : String(error);
  return new CliError('internal', `unexpected failure: ${message}`, { cause: error });
}

// By real paths: npm runs the bin through a symlink (node_modules/.bin/ordivon, npx, npm link, a
// global install), so argv[1] names the link while import.meta.url names the file.
const isEntry = process.argv[1] !== undefined && (await isEntryPoint(process.argv[1]));

async function isEntryPoint(argv1: string): Promise<boolean> {
  const [{ realpathSync }, { fileURLToPath }] = await Promise.all([import('node:fs'), import('node:url')]);
  try {
    return realpathSync(argv1) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}
if (isEntry) {
  // lmdb-js 3.5 rejects an internal promise as well as the caller's when a commit fails (disk
  // full, I/O error); the caller already answered `storage_failed`, so only that one is ignored
  // (recognised by the `commitError` lmdb-js gives it: store/record-read.ts).
  process.on('unhandledRejection', (reason) => {
    if (isCommitFailure(reason)) return;
    throw reason;
  });
  const io: Io = { json: false, out: (t) => console.log(t), err: (t) => console.error(t) };
  main(process.argv.slice(2), io).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error);
      process.exit(EXIT.failed);
    },
  );
}
