#!/usr/bin/env node
import { apply } from './commands/apply-command.js';
import { backup, restore } from './commands/backup.js';
import { bench } from './commands/bench.js';
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
// it runs (an installed package's `ordivon --help` loads no store, no agent and no workload).
import { isCommitFailure } from '../store/commit-failure.js';
import { ALLOW_SHARED_ROOT_ENV } from '../store/private-root.js';
import { isCodedError, type CodedError } from '../base/coded-error.js';
import { CliError, EXIT, cliErrorOf, printError, type CliErrorCode, type Io } from './cli-io.js';
import type { Command, Program } from './command.js';
import { parseCommandLine } from './command-line.js';
import { registrations } from './extensions.js';
import { packageVersion } from './version.js';

/**
 * Every command, in usage order: its flags, usage and handler are one definition (cli/commands/).
 * The registered ones (the demo, from workloads/register.ts: cli/extensions.ts) come first.
 */
const COMMANDS: readonly Command[] = [
  ...(await registrations()).flatMap((registration) => registration.commands ?? []),
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
  bench,
];

export const ORDIVON: Program = {
  name: 'ordivon',
  title: 'ordivon — durable supervisor for agent work',
  commands: COMMANDS,
  footer: [
    'exit codes: 0 ok, 1 refused or failed (the code is printed), 2 malformed input (nothing written), 130 run stopped by SIGINT',
    'results on stdout; errors and refusals on stderr (with --json as {"error": {"code", "message", …}})',
    'state root: --state DIR, else ORDIVON_STATE, else ./.ordivon',
  ],
};

/**
 * Runs the CLI; returns the exit code. Exported for tests that run it in-process. `--json`
 * anywhere on the line (or `io.json`) makes every answer, errors included, one JSON document.
 */
export async function main(argv: string[], io: Io): Promise<number> {
  const line = await parseCommandLine(ORDIVON, argv);
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
