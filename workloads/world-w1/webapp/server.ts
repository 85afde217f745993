import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { CodedError, zodIssue, type Issue } from '../../../base/index.js';
import { serverMain } from '../../shared/server-main.js';
import { openWebappDb, type WebappDb } from './webapp-db.js';
import type { WebappCode } from './webapp-error.js';
import { confirmationPage, historyPage, itemPage, refusalPage } from './webapp-pages.js';
import {
  FaultMode,
  FaultRequest,
  HistoryQuery,
  IdentityRequest,
  ItemName,
  OrderForm,
  type FaultState,
} from './webapp-schema.js';

/**
 * The World W1 web app: `node server.js --db FILE --port N --identity ID [--fault MODE
 * [--fault-times N] [--delay-ms N]]`. One process, one SQLite file of items and orders, HTML pages
 * a browser drives and JSON control routes on 127.0.0.1; prints `{"port":N}` on stdout once it
 * listens. Exit 2 on a bad command line, 1 if the file or the listen fails, 0 on SIGTERM or SIGINT.
 *
 * Failure semantics of `POST /orders`: the order is committed and synced before anything is sent.
 * If the confirmation is then lost (a fault switch, a dead process, a dropped connection), the
 * order is in the file and `GET /orders?note=…` lists it; nothing here ever undoes or
 * deduplicates it. A refusal (400, 404, 409, 413, 500) appended nothing.
 */

const BODY_LIMIT = 64 * 1024;
const DEFAULT_DELAY_MS = 60_000;

const Count = (what: string) => z.string().regex(/^\d+$/, what).transform(Number).pipe(z.number().int().nonnegative());

const Args = z.strictObject({
  db: z.string().min(1),
  port: Count('a port number (0: any free port)').pipe(z.number().max(65535)),
  identity: z.string().min(1).max(200),
  fault: FaultMode.default('none'),
  'fault-times': Count('a positive count').pipe(z.number().positive()).optional(),
  'delay-ms': Count('milliseconds').pipe(z.number().max(600_000)).optional(),
});

/** A refusal the server answers: a coded error with its HTTP status and `{code, path, message}`. */
class Refusal extends CodedError<WebappCode> {
  readonly answer: Issue<WebappCode>;

  constructor(
    readonly status: number,
    issue: Issue<WebappCode>,
  ) {
    super(issue.code, issue.message, { path: issue.path });
    this.answer = issue;
  }
}

const unparsed = (error: z.ZodError) => new Refusal(400, zodIssue('webapp_invalid_request', error));

/** The fault switch: each submit that commits takes one turn of it. */
class Faults {
  private state: FaultState = { mode: 'none', remaining: null, delayMs: DEFAULT_DELAY_MS };

  set(request: FaultRequest): FaultState {
    const delayMs = request.delayMs ?? DEFAULT_DELAY_MS;
    this.state =
      request.mode === 'none'
        ? { mode: 'none', remaining: null, delayMs }
        : { mode: request.mode, remaining: request.times ?? null, delayMs };
    return this.state;
  }

  get current(): FaultState {
    return this.state;
  }

  take(): FaultState {
    const taken = this.state;
    if (taken.remaining !== null)
      this.state =
        taken.remaining > 1
          ? { ...taken, remaining: taken.remaining - 1 }
          : { mode: 'none', remaining: null, delayMs: taken.delayMs };
    return taken;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Read to the end even past the limit: leaving the loop early destroys the request, and with it
  // the socket the refusal has to be answered on.
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= BODY_LIMIT) chunks.push(chunk);
  }
  if (size > BODY_LIMIT)
    throw new Refusal(413, { code: 'webapp_body_too_large', path: '(root)', message: `over ${BODY_LIMIT} bytes` });
  return Buffer.concat(chunks).toString('utf8');
}

async function readJson<S extends z.ZodType>(req: IncomingMessage, schema: S): Promise<z.output<S>> {
  const text = await readBody(req);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const message = `the body is not JSON: ${(error as Error).message}`;
    throw new Refusal(400, { code: 'webapp_invalid_request', path: '(root)', message });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw unparsed(parsed.error);
  return parsed.data;
}

/** Query or form parameters as an object; a parameter given twice becomes an array, which the schemas refuse. */
function paramsOf(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    out[key] = values.length === 1 ? values[0]! : values;
  }
  return out;
}

async function readForm(req: IncomingMessage): Promise<OrderForm> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
  const text = await readBody(req);
  if (type !== 'application/x-www-form-urlencoded')
    throw new Refusal(400, {
      code: 'webapp_invalid_request',
      path: '(root)',
      message: `the body is ${type || 'untyped'}, not application/x-www-form-urlencoded`,
    });
  const parsed = OrderForm.safeParse(paramsOf(new URLSearchParams(text)));
  if (!parsed.success) throw unparsed(parsed.error);
  return parsed.data;
}

/** A database call; whatever it throws is the storage's failure (an append that throws appended nothing). */
function storage<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw new Refusal(500, { code: 'webapp_storage_failed', path: '(root)', message: String(error) });
  }
}

function handler(db: WebappDb, faults: Faults, site: { identity: string }) {
  // Every answer closes its connection, so a dropped answer never leaves a kept-alive socket for
  // the next request to fail on. (A browser may still resend a submit on a preconnected socket that
  // closed unanswered; the browser adapter sends each submit once itself, adapters/browser/.)
  const headers = (type: string, length: number, extra: Record<string, string> = {}) => ({
    'content-type': type,
    'content-length': length,
    'site-identity': site.identity,
    connection: 'close',
    ...extra,
  });
  const html = (res: ServerResponse, status: number, body: string, extra?: Record<string, string>) => {
    res.writeHead(status, headers('text/html; charset=utf-8', Buffer.byteLength(body), extra));
    res.end(body);
  };
  const json = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, headers('application/json', Buffer.byteLength(text)));
    res.end(text);
  };
  const itemNamed = (raw: string) => {
    const name = ItemName.safeParse(decodeURIComponent(raw));
    if (!name.success) throw unparsed(name.error);
    return name.data;
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const item = /^\/items\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && item) {
      const name = itemNamed(item[1]!);
      const found = storage(() => db.item(name));
      if (found === undefined)
        throw new Refusal(404, { code: 'webapp_item_not_found', path: 'name', message: `no item ${name}` });
      return html(res, 200, itemPage(site.identity, found), { etag: `"${found.version}"` });
    }
    const change = /^\/control\/items\/([^/]+)\/change$/.exec(url.pathname);
    if (method === 'POST' && change) {
      const name = itemNamed(change[1]!);
      const changed = storage(() => db.changeItem(name));
      if (changed === undefined)
        throw new Refusal(404, { code: 'webapp_item_not_found', path: 'name', message: `no item ${name}` });
      return json(res, 200, changed);
    }
    const key = `${method} ${url.pathname}`;
    switch (key) {
      case 'POST /orders': {
        const form = await readForm(req);
        const outcome = storage(() => db.order(form));
        if (!outcome.ok) {
          if (outcome.current === undefined)
            throw new Refusal(404, { code: 'webapp_item_not_found', path: 'item', message: `no item ${form.item}` });
          throw new Refusal(409, {
            code: 'webapp_item_changed',
            path: 'version',
            message: `item ${form.item} is at ${outcome.current.version}, not ${form.version}; nothing was ordered`,
          });
        }
        const fault = faults.take();
        if (fault.mode === 'commit-then-drop') {
          // Committed, then the connection goes without an answer: the browser cannot tell this
          // from a request that never arrived.
          req.socket.destroy();
          return;
        }
        const page = confirmationPage(site.identity, outcome.order);
        if (fault.mode === 'delay-confirmation') {
          // Committed; the confirmation leaves after delayMs, to whoever still waits for it.
          setTimeout(() => html(res, 200, page), fault.delayMs).unref();
          return;
        }
        return html(res, 200, page);
      }
      case 'GET /orders': {
        const query = HistoryQuery.safeParse(paramsOf(url.searchParams));
        if (!query.success) throw unparsed(query.error);
        const orders = storage(() => db.orders(query.data.note));
        return html(res, 200, historyPage(site.identity, query.data.note, orders));
      }
      case 'GET /control/orders':
        return json(res, 200, { orders: storage(() => db.orders()) });
      case 'GET /control/faults':
        return json(res, 200, faults.current);
      case 'POST /control/faults':
        return json(res, 200, faults.set(await readJson(req, FaultRequest)));
      case 'GET /control/identity':
        return json(res, 200, { identity: site.identity });
      case 'POST /control/identity':
        site.identity = (await readJson(req, IdentityRequest)).identity;
        return json(res, 200, { identity: site.identity });
      default:
        throw new Refusal(404, { code: 'webapp_route_not_found', path: '(root)', message: `no route ${key}` });
    }
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    route(req, res).catch((error: unknown) => {
      const refusal =
        error instanceof Refusal
          ? error
          : new Refusal(500, { code: 'webapp_storage_failed', path: '(root)', message: String(error) });
      // The control routes answer JSON; every other route is a page a browser shows.
      if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname.startsWith('/control/'))
        json(res, refusal.status, refusal.answer);
      else html(res, refusal.status, refusalPage(site.identity, refusal.answer));
    });
  };
}

serverMain({
  options: {
    db: { type: 'string' },
    port: { type: 'string' },
    identity: { type: 'string' },
    fault: { type: 'string' },
    'fault-times': { type: 'string' },
    'delay-ms': { type: 'string' },
  },
  args: Args,
  codes: { usage: 'webapp_usage', startFailed: 'webapp_start_failed' } satisfies Record<string, WebappCode>,
  records: (args) => args.db,
  open: (args) => {
    const faults = new Faults();
    faults.set({ mode: args.fault, times: args['fault-times'], delayMs: args['delay-ms'] });
    return { db: openWebappDb(args.db), faults };
  },
  handler: (args, { db, faults }) => handler(db, faults, { identity: args.identity }),
  line: (_, port) => ({ port }),
  close: ({ db }) => db.close(),
  port: (args) => args.port,
});
