import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { boundary, paramsOf, sendJson } from '../../shared/http-boundary.js';
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

const { refuse, parse, readBody, readParsed, storage, listener } = boundary<WebappCode>({
  invalid: 'webapp_invalid_request',
  tooLarge: 'webapp_body_too_large',
  storageFailed: 'webapp_storage_failed',
  // A refusal appended nothing; whatever else a route throws is answered the same.
  internal: 'webapp_storage_failed',
  bodyLimit: 64 * 1024,
});

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

async function readForm(req: IncomingMessage): Promise<OrderForm> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
  const text = await readBody(req);
  if (type !== 'application/x-www-form-urlencoded')
    throw refuse(
      400,
      'webapp_invalid_request',
      `the body is ${type || 'untyped'}, not application/x-www-form-urlencoded`,
    );
  return parse(OrderForm, paramsOf(new URLSearchParams(text)));
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
  const json = (res: ServerResponse, status: number, body: unknown) =>
    sendJson(res, status, body, { 'site-identity': site.identity, connection: 'close' });
  const itemNamed = (raw: string) => parse(ItemName, decodeURIComponent(raw));

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const item = /^\/items\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && item) {
      const name = itemNamed(item[1]!);
      const found = storage(() => db.item(name));
      if (found === undefined) throw refuse(404, 'webapp_item_not_found', `no item ${name}`, 'name');
      return html(res, 200, itemPage(site.identity, found), { etag: `"${found.version}"` });
    }
    const change = /^\/control\/items\/([^/]+)\/change$/.exec(url.pathname);
    if (method === 'POST' && change) {
      const name = itemNamed(change[1]!);
      const changed = storage(() => db.changeItem(name));
      if (changed === undefined) throw refuse(404, 'webapp_item_not_found', `no item ${name}`, 'name');
      return json(res, 200, changed);
    }
    const key = `${method} ${url.pathname}`;
    switch (key) {
      case 'POST /orders': {
        const form = await readForm(req);
        const outcome = storage(() => db.order(form));
        if (!outcome.ok) {
          if (outcome.current === undefined) throw refuse(404, 'webapp_item_not_found', `no item ${form.item}`, 'item');
          throw refuse(
            409,
            'webapp_item_changed',
            `item ${form.item} is at ${outcome.current.version}, not ${form.version}; nothing was ordered`,
            'version',
          );
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
        const query = parse(HistoryQuery, paramsOf(url.searchParams));
        const orders = storage(() => db.orders(query.note));
        return html(res, 200, historyPage(site.identity, query.note, orders));
      }
      case 'GET /control/orders':
        return json(res, 200, { orders: storage(() => db.orders()) });
      case 'GET /control/faults':
        return json(res, 200, faults.current);
      case 'POST /control/faults':
        return json(res, 200, faults.set(await readParsed(req, FaultRequest)));
      case 'GET /control/identity':
        return json(res, 200, { identity: site.identity });
      case 'POST /control/identity':
        site.identity = (await readParsed(req, IdentityRequest)).identity;
        return json(res, 200, { identity: site.identity });
      default:
        throw refuse(404, 'webapp_route_not_found', `no route ${key}`);
    }
  };
  return listener(route, (req, res, refusal) => {
    // The control routes answer JSON; every other route is a page a browser shows.
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname.startsWith('/control/'))
      json(res, refusal.status, refusal.answer);
    else html(res, refusal.status, refusalPage(site.identity, refusal.answer));
  });
}

serverMain({
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
