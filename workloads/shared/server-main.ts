import { createServer, type RequestListener } from 'node:http';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { describeIssues } from '../../base/index.js';

/** What one frozen world's server process is: its flags, what it keeps open, how it answers. */
export interface ServerMain<A, R> {
  /** Its flags, one key each (`--fault-times` is `'fault-times'`): every flag a string on the command line. */
  args: z.ZodType<A> & { shape: Record<string, unknown> };
  /** Its codes for a command line that does not parse (exit 2) and a start that failed (exit 1). */
  codes: { usage: string; startFailed: string };
  /** Where its records are, for the start error. */
  records(args: A): string;
  /** Opens what it keeps (its records file); a throw is a failed start naming `records`. */
  open(args: A): R;
  handler(args: A, open: R): RequestListener;
  /** The line printed on stdout once it listens (what the launcher, server-child.ts, waits for). */
  line(args: A, port: number): unknown;
  /** Closes what `open` opened, on SIGTERM or SIGINT, before exiting 0. */
  close(open: R): void;
  /** The port flag, parsed. */
  port(args: A): number;
}

/** A coded line on stderr, then the exit. */
function fail(code: string, message: string, exitCode: number): never {
  process.stderr.write(JSON.stringify({ code, message }) + '\n');
  process.exit(exitCode);
}

/**
 * Runs a world's server process: parses the flags (exit 2 and the usage code when they do not
 * parse), opens its records (exit 1 and the start code when it cannot), listens on 127.0.0.1,
 * prints its line, and on SIGTERM or SIGINT closes the server, its connections and its records and
 * exits 0.
 */
export function serverMain<A, R>(main: ServerMain<A, R>): void {
  const { usage, startFailed } = main.codes;
  let args: A;
  try {
    const options: ParseArgsConfig['options'] = Object.fromEntries(
      Object.keys(main.args.shape).map((flag) => [flag, { type: 'string' }]),
    );
    const { values } = parseArgs({ options, strict: true, allowPositionals: false });
    const parsed = main.args.safeParse(values);
    if (!parsed.success) fail(usage, describeIssues(parsed.error), 2);
    args = parsed.data;
  } catch (error) {
    fail(usage, (error as Error).message, 2);
  }
  let open: R;
  try {
    open = main.open(args);
  } catch (error) {
    fail(startFailed, `cannot open ${main.records(args)}: ${(error as Error).message}`, 1);
  }
  const server = createServer(main.handler(args, open));
  server.on('error', (error) => fail(startFailed, `listen failed: ${error.message}`, 1));
  server.listen(main.port(args), '127.0.0.1', () => {
    const address = server.address();
    if (address === null || typeof address === 'string') fail(startFailed, 'no TCP address', 1);
    process.stdout.write(JSON.stringify(main.line(args, address.port)) + '\n');
  });
  const stop = () => {
    main.close(open);
    server.close();
    server.closeAllConnections();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
