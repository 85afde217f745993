#!/usr/bin/env node
import { backup, restore } from './commands/backup.js';
import { demo } from './commands/demo.js';
import { graph } from './commands/graph.js';
import { doctor, list, show } from './commands/inspect.js';
import { serve } from './commands/serve.js';
import { send, taskCreate } from './commands/write.js';
import { CliError, EXIT, type Io } from './cli-io.js';

type Command = (argv: string[], io: Io) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  demo,
  'task create': taskCreate,
  send,
  show,
  list,
  doctor,
  serve,
  graph,
  backup,
  restore,
};

const USAGE = `ordivon — durable supervisor for agent work

usage: ordivon <command> [--state DIR] [--json] ...
  demo [--acp-agent opencode|hermes-like] [--only SCENARIO,...] [--fresh]
                                   the frozen repair workload end to end (npm start): both orders,
                                   faults F1 F2 F3, artifact-first; exit 1 naming a failed expectation
  task create --spec FILE          create a Task from a JSON spec
  send TASK_ID EVENT_JSON          send an event (assignment.commit, completion.propose, task.cancel)
       [--event-id ID]             idempotency key: a retry is acknowledged, not written twice
  show TASK_ID [--events]          a Task's state, evidence, rejections (and events)
  list                             every Task
  doctor [--full]                  every boot check, every event (no checkpoints); exit 1 naming what is
                                   wrong; --full spreads it over worker threads (verifyFull)
  backup DEST                      a consistent, checked copy of the state root (also while it is served)
  restore SRC [--force]            bring a backup back as the state root (--force replaces a non-empty one)
  serve [--port N | --socket PATH] [--host ADDR --token T] [--no-harnesses] [--inspect [--inspect-url WS]]
                                   run the supervisor as a service: JSON control API, SSE, page at /
                                   (send/show/list talk to it while it holds the state root)
  graph [--format mermaid|dot|json]  export the Task statechart from the machine definition

exit codes: 0 ok, 1 refused or failed (the code is printed), 2 malformed input (nothing written)
state root: --state DIR, else ORDIVON_STATE, else ./.ordivon`;

/** Runs the CLI; returns the exit code. Exported for tests that run it in-process. */
export async function main(argv: string[], io: Io): Promise<number> {
  const words = argv.filter((a) => !a.startsWith('-'));
  const name = [words.slice(0, 2).join(' '), words[0] ?? ''].find((n) => n in COMMANDS);
  if (!name) {
    if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
      io.out(USAGE);
      return argv.length === 0 ? EXIT.usage : EXIT.ok;
    }
    io.err(`ordivon: unknown command ${JSON.stringify(words.join(' '))}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const rest = [...argv];
  for (const word of name.split(' ')) rest.splice(rest.indexOf(word), 1);
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(USAGE);
    return EXIT.ok;
  }
  try {
    return await COMMANDS[name]!(rest, io);
  } catch (thrown) {
    const error = thrown instanceof CliError ? thrown : storageFault(thrown);
    if (error === undefined) throw thrown;
    if (io.json)
      io.out(JSON.stringify({ error: { code: error.code, message: error.message, ...error.details } }, null, 2));
    else io.err(`ordivon: ${error.code}: ${error.message}`);
    return error.exit;
  }
}

/**
 * LMDB reports what it cannot do (open an environment, begin a transaction) with a numeric errno
 * or MDB code and no Ordivon code; the CLI answers it `storage_failed` (exit 1) instead of a stack.
 */
function storageFault(error: unknown): CliError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (!(error instanceof Error) || typeof code !== 'number') return undefined;
  return new CliError(
    'storage_failed',
    `the state root's LMDB environment failed: ${error.message} (code ${code})`,
    EXIT.failed,
  );
}

const isEntry = process.argv[1] && import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href;
if (isEntry) {
  // lmdb-js 3.5 rejects an internal promise as well as the caller's when a commit fails (disk
  // full, I/O error); the caller already answered `storage_failed`, so only that one is ignored.
  process.on('unhandledRejection', (reason) => {
    if (reason instanceof Error && /^Commit failed/.test(reason.message)) return;
    throw reason;
  });
  const argv = process.argv.slice(2);
  const io: Io = { json: argv.includes('--json'), out: (t) => console.log(t), err: (t) => console.error(t) };
  main(argv, io).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error);
      process.exit(EXIT.failed);
    },
  );
}
