import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { boundary, paramsOf, sendJson } from '../../shared/http-boundary.js';
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

const { refuse, parse, readParsed, storage, listener } = boundary<LedgerCode>({
  invalid: 'ledger_invalid_request',
  tooLarge: 'ledger_body_too_large',
  storageFailed: 'ledger_storage_failed',
  // An append that throws appended nothing; whatever else a route throws is answered the same.
  internal: 'ledger_storage_failed',
  bodyLimit: 1024 * 1024,
});

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

function handler(ledger: LedgerDb, faults: Faults) {
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const key = `${req.method} ${url.pathname}`;
    switch (key) {
      case 'POST /perform': {
        const request = await readParsed(req, PerformRequest);
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
        return sendJson(res, 200, { receipt });
      }
      case 'GET /lookup': {
        const query = parse(LookupQuery, paramsOf(url.searchParams));
        return sendJson(res, 200, { receipts: storage(() => ledger.lookup(query.requestId)) });
      }
      case 'GET /entries':
        return sendJson(res, 200, { entries: storage(() => ledger.entries()) });
      case 'GET /faults':
        return sendJson(res, 200, faults.current);
      case 'POST /faults':
        return sendJson(res, 200, faults.set(await readParsed(req, FaultRequest)));
      default:
        throw refuse(404, 'ledger_route_not_found', `no route ${key}`);
    }
  };
  // A refused body may be unread; closing after the answer keeps the connection from reusing it.
  return listener(route, (_, res, refusal) => sendJson(res, refusal.status, refusal.answer, { connection: 'close' }));
}

serverMain({
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
