import { booleanFlag, stringFlag, type Args, type Zod } from '../command.js';
import { configFlag } from '../config-flag.js';

/** Default TCP port of `ordivon serve` (on 127.0.0.1). */
export const DEFAULT_PORT = 7420;

/** How long a drain lets running stages finish by default (`--drain-timeout`). */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

/** The flags of `ordivon serve`, apart from its command so its handler can name their type without importing the command. */
export const serveFlags = {
  port: stringFlag('N', `TCP port on --host (default ${DEFAULT_PORT}; 0 picks a free one); not with --socket`, (z) =>
    z
      .string()
      .regex(/^[0-9]+$/, 'must be an integer 0-65535')
      .transform(Number)
      .refine((n) => n <= 65535, 'must be an integer 0-65535')
      .optional(),
  ),
  socket: stringFlag('PATH', 'listen on a Unix socket instead of TCP', (z) =>
    z.string().min(1, 'must not be empty').optional(),
  ),
  host: stringFlag(
    'ADDR',
    'the address to listen on; other than loopback it needs a token (--token-file, ORDIVON_TOKEN or --token)',
    (z) => z.string().min(1, 'must not be empty').default('127.0.0.1'),
    { fallback: '127.0.0.1' },
  ),
  'token-file': stringFlag(
    'PATH',
    "bearer token every request must carry: the file's contents, trimmed; the file must not be group/other readable (else --token; else ORDIVON_TOKEN; else, on TCP, one generated into service.json)",
    (z) => z.string().min(1, 'must not be empty').optional(),
  ),
  token: stringFlag(
    'T',
    'the bearer token on the command line, where every local account sees it in ps (a warning says so): prefer --token-file or ORDIVON_TOKEN',
    (z) => z.string().min(1, 'must not be empty').optional(),
  ),
  'log-level': stringFlag(
    'LEVEL',
    'JSON log lines on stderr from this level up: fatal, error, warn, info, debug, trace, silent (default info; else ORDIVON_LOG_LEVEL)',
    (z) =>
      z
        .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
          error: 'must be fatal, error, warn, info, debug, trace or silent',
        })
        .optional(),
  ),
  config: configFlag,
  'no-harnesses': booleanFlag(
    'the bare supervisor: no harnesses (no configuration read), Tasks wait at their frontier',
  ),
  'demo-harnesses': booleanFlag("the demo's scripted harnesses (codex, hermes) instead of a configuration"),
  'acp-agent': stringFlag(
    'opencode|hermes-like',
    'with --demo-harnesses, the ACP agent behind hermes: the real opencode acp (default) or the scripted Hermes-like one',
    (z) => z.enum(['opencode', 'hermes-like'], { error: 'must be opencode or hermes-like' }).optional(),
  ),
  inspect: booleanFlag('stream actor events to the Stately inspector (see --inspect-url)'),
  'inspect-url': stringFlag(
    'WS',
    "the inspector's WebSocket",
    (z) => z.string().min(1, 'must not be empty').default('ws://127.0.0.1:8080'),
    { fallback: 'ws://127.0.0.1:8080' },
  ),
  store: stringFlag(
    'URL',
    'postgres://…: share Tasks with other Hosts on one PostgreSQL database (else ORDIVON_STORE; default the embedded store)',
    (z) =>
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// or postgresql:// URL')
        .optional(),
  ),
  'host-id': stringFlag('ID', "with --store, this Host's name in lease rows (default <hostname>-<pid>-<random>)", (z) =>
    z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'letters, digits, . _ : - (not first), at most 128')
      .optional(),
  ),
  'lease-ms': stringFlag(
    'N',
    'with --store, how long a Task stays with a silent Host before another takes it (default 10000)',
    millisecondsAtLeast(100),
  ),
  'poll-ms': stringFlag(
    'N',
    "with --store, how often other Hosts' commits are looked for, for subscribers and SSE (default 1000; a NOTIFY comes sooner)",
    millisecondsAtLeast(10),
  ),
  'no-notify': booleanFlag(
    'with --store, send no NOTIFY and LISTEN for none (behind pgbouncer in transaction mode): polling alone',
  ),
  'advertise-url': stringFlag(
    'URL',
    "with --store, where clients reach this Host, published for other Hosts' task_elsewhere answers (default the TCP listener's http://HOST:PORT; none on a socket)",
    (z) =>
      z
        .string()
        .regex(/^https?:\/\/\S+$/, 'expected an http:// or https:// URL')
        .optional(),
  ),
  'db-connect-timeout-ms': stringFlag(
    'N',
    'with --store, how long opening a database connection may take before it fails storage_failed (default the statement timeout)',
    millisecondsAtLeast(10),
  ),
  'db-statement-timeout-ms': stringFlag(
    'N',
    'with --store, how long one database statement may take before it fails storage_failed (default the lease, --lease-ms)',
    millisecondsAtLeast(10),
  ),
  'drain-timeout': stringFlag(
    'MS',
    `on SIGTERM/SIGINT, how long running stages may finish before the rest are stopped (recoverable: dispatched again after a restart as their retry allows; default ${DEFAULT_DRAIN_TIMEOUT_MS}; 0: stop them at once)`,
    millisecondsAtLeast(0),
  ),
  recovery: stringFlag(
    'full|checkpoint',
    'verify every event at boot and replay every one (full), or only the tails after checkpoints the chain matches (checkpoint, the default)',
    (z) => z.enum(['full', 'checkpoint'], { error: 'must be full or checkpoint' }).default('checkpoint'),
    { fallback: 'checkpoint' },
  ),
  'checkpoint-every': stringFlag('N', 'checkpoint a Task every N events (0: only at boot and stop)', (z) =>
    z
      .string()
      .regex(/^[0-9]+$/, 'expected a whole number of events (0: checkpoints only at boot and stop)')
      .transform(Number)
      .optional(),
  ),
};

/** What `ordivon serve`'s handler receives. */
export type ServeArgs = Args<typeof serveFlags>;

/** A flag's whole number of milliseconds, at least `min` (a lazy schema). */
function millisecondsAtLeast(min: number) {
  const message = `expected a whole number of milliseconds, at least ${min}`;
  return (z: Zod) =>
    z
      .string()
      .regex(/^[0-9]+$/, message)
      .transform(Number)
      .refine((n) => n >= min, message)
      .optional();
}
