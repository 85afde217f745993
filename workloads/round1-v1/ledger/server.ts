import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { CodedError, zodIssue, type Issue } from '../../../base/index.js';
import { serverMain } from '../../shared/server-main.js';
import { openLedgerDb, type LedgerDb } from './ledger-db.js';
import type { LedgerCode } from './ledger-error.js';
import { FaultMode, FaultRequest, LookupQuery, PerformRequest, type FaultState } from './ledger-schema.js';

/**
 * The Round 1 ledger server: `node server.js --db FILE --port N [--fault MODE [--fault-times N]]`.
 * One process, one durable append-only ledger file, a JSON API on 127.0.0.1; prints `{"port":N}`
 * on stdout once it listens. Exit 2 on a bad command line, 1 if the file or the listen fails,
 * 0 on SIGTERM or SIGINT (the database closed first).
 *
 * Failure semantics of `POST /perform`: the entry is committed and synced before anything is sent.
 * If the answer is then lost (a fault switch, a dead process, a dropped connection), the entry is
 * in the file and `GET /lookup` finds it; nothing here ever undoes or deduplicates it.
 */

const BODY_LIMIT = 1024 * 1024;

const Args = z.strictObject({
  db: z.string().min(1),
  port: z
    .string()
    .regex(/^\d+$/, 'a port number (0: any free port)')
    .transform(Number)
    .pipe(z.number().int().max(65535)),
  fault: FaultMode.default('none'),
  'fault-times': z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().positive()).optional(),
});

/** A refusal the server answers: a coded error with its HTTP status and the `{code, path, message}` body. */
class Refusal extends CodedError<LedgerCode> {
  readonly answer: Issue<LedgerCode>;

  constructor(
    readonly status: number,
    issue: Issue<LedgerCode>,
  ) {
    super(issue.code, issue.message, { path: issue.path });
    this.answer = issue;
  }
}

const unparsed = (error: z.ZodError) => new Refusal(400, zodIssue('ledger_invalid_request', error));

/** The fault switch: each perform that commits takes one turn of it. */
class Faults {
  private state: FaultState = { mode: 'none', remaining: null };

  set(request: FaultRequest): FaultState {
    this.state =
      request.mode === 'none'
        ? { mode: 'none', remaining: null }
        : { mode: request.mode, remaining: request.times ?? null };
    return this.state;
  }

  get current(): FaultState {
    return this.state;
  }

  take(): FaultMode {
    const { mode, remaining } = this.state;
    if (remaining !== null)
      this.state = remaining > 1 ? { mode, remaining: remaining - 1 } : { mode: 'none', remaining: null };
    return mode;
  }
}

async function readJson<S extends z.ZodType>(req: IncomingMessage, schema: S): Promise<z.output<S>> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Read to the end even past the limit: leaving the loop early destroys the request, and with it
  // the socket the refusal has to be answered on.
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= BODY_LIMIT) chunks.push(chunk);
  }
  if (size > BODY_LIMIT)
    throw new Refusal(413, { code: 'ledger_body_too_large', path: '(root)', message: `over ${BODY_LIMIT} bytes` });
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    const message = `the body is not JSON: ${(error as Error).message}`;
    throw new Refusal(400, { code: 'ledger_invalid_request', path: '(root)', message });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw unparsed(parsed.error);
  return parsed.data;
}

/** The query as an object; a parameter given twice becomes an array, which the schema refuses. */
function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? values[0]! : values;
  }
  return query;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function handler(ledger: LedgerDb, faults: Faults) {
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const key = `${req.method} ${url.pathname}`;
    switch (key) {
      case 'POST /perform': {
        const request = await readJson(req, PerformRequest);
        const receipt = storage(() => ledger.append(request));
        const fault = faults.take();
        if (fault === 'commit-then-drop') {
          // Committed, then the connection goes without an answer: the client cannot tell this
          // from a request that never arrived.
          req.socket.destroy();
          return;
        }
        if (fault === 'crash-after-commit') {
          // Committed, then the process dies the way a machine loss or the OOM killer ends it: no
          // answer, no shutdown handler, no close of the database (the WAL keeps the entry).
          process.kill(process.pid, 'SIGKILL');
          return;
        }
        return send(res, 200, { receipt });
      }
      case 'GET /lookup': {
        const query = LookupQuery.safeParse(queryOf(url));
        if (!query.success) throw unparsed(query.error);
        return send(res, 200, { receipts: storage(() => ledger.lookup(query.data.requestId)) });
      }
      case 'GET /entries':
        return send(res, 200, { entries: storage(() => ledger.entries()) });
      case 'GET /faults':
        return send(res, 200, faults.current);
      case 'POST /faults':
        return send(res, 200, faults.set(await readJson(req, FaultRequest)));
      default:
        throw new Refusal(404, { code: 'ledger_route_not_found', path: '(root)', message: `no route ${key}` });
    }
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    route(req, res).catch((error: unknown) => {
      const refusal =
        error instanceof Refusal
          ? error
          : new Refusal(500, { code: 'ledger_storage_failed', path: '(root)', message: String(error) });
      // A refused body may be unread; closing after the answer keeps the connection from reusing it.
      res.setHeader('connection', 'close');
      send(res, refusal.status, refusal.answer);
    });
  };
}

/** A database call; whatever it throws is the storage's failure (an append that throws appended nothing). */
function storage<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw new Refusal(500, { code: 'ledger_storage_failed', path: '(root)', message: String(error) });
  }
}

serverMain({
  options: {
    db: { type: 'string' },
    port: { type: 'string' },
    fault: { type: 'string' },
    'fault-times': { type: 'string' },
  },
  args: Args,
  codes: { usage: 'ledger_usage', startFailed: 'ledger_start_failed' } satisfies Record<string, LedgerCode>,
  records: (args) => args.db,
  open: (args) => {
    const faults = new Faults();
    faults.set({ mode: args.fault, times: args['fault-times'] });
    return { ledger: openLedgerDb(args.db), faults };
  },
  handler: (_, { ledger, faults }) => handler(ledger, faults),
  line: (_, port) => ({ port }),
  close: ({ ledger }) => ledger.close(),
  port: (args) => args.port,
});
