import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { HostError, type Supervisor } from '../../kernel/index.js';
import { checkAccess, type AccessPolicy } from './access.js';
import type { ServiceMetrics } from './metrics.js';
import { ApiError, apiErrorOf, sendError } from './http-io.js';
import { controlRoutes, FRAME_ANCESTORS } from './control-routes.js';
import { methodNotAllowed, RouteTable, routeRequest, type Match, type RequestNote } from './route-table.js';
import { SseHub, type SseHubOptions } from './sse-hub.js';

export { statusOfSend } from './control-routes.js';

export interface ControlApiOptions {
  supervisor: Supervisor;
  access: AccessPolicy;
  /** The SSE streams' bound on a slow client and their keep-alive (docs/service.md). */
  stream?: SseHubOptions;
  /** One `request` line per answered request (none: not logged). */
  log?: Logger;
  /** What `GET /metrics` answers (none: that route is 404). */
  metrics?: ServiceMetrics;
}

/** An `X-Request-Id` a client may give (echoed and logged); anything else is replaced by a new one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface ControlApi {
  /** The Node `request` listener. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Refuses new requests (503 `draining`, with `Retry-After: retryAfterSeconds`, default 1), ends
   * SSE streams and resolves when in-flight requests have answered.
   */
  drain(options?: { retryAfterSeconds?: number }): Promise<void>;
  readonly hub: SseHub;
}

/** Whether the service drains, and the `Retry-After` it then answers with. */
interface Draining {
  draining: boolean;
  retryAfter: number;
}

/**
 * The control API over a running supervisor: one route table (`controlRoutes`, docs/service.md),
 * each request matched against it once. Every path parameter, query and body is parsed with zod
 * before the supervisor sees it; a refused request writes nothing. Errors are `{ error: { code,
 * message, path? } }`; `send` answers with the library's `SendResult` and a status from
 * `statusOfSend`.
 */
export function createControlApi(options: ControlApiOptions): ControlApi {
  const sup = options.supervisor;
  const hub = new SseHub(options.stream);
  // Other Hosts' commits only of the Tasks a connected stream follows (any, for an all-Tasks stream).
  const unsubscribe = sup.subscribe((c) => hub.publish(c), { remote: (id) => hub.follows(id) });
  const inflight = new Set<Promise<void>>();
  const state: Draining = { draining: false, retryAfter: 1 };
  const { access, metrics, log } = options;
  const table = new RouteTable(controlRoutes({ sup, access, hub, metrics, log, draining: () => state.draining }));
  return {
    hub,
    handle(req, res) {
      const done = answer(table, req, res, { access, log, state }).finally(() => inflight.delete(done));
      inflight.add(done);
    },
    async drain({ retryAfterSeconds = 1 } = {}) {
      state.draining = true;
      state.retryAfter = retryAfterSeconds;
      unsubscribe();
      hub.close();
      await Promise.all([...inflight]);
    },
  };
}

/** Answers one request: matched once against the table, its line logged when it closes, any refusal as `{error}`. */
async function answer(
  table: RouteTable,
  req: IncomingMessage,
  res: ServerResponse,
  { access, log, state }: { access: AccessPolicy; log: Logger | undefined; state: Draining },
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://service');
  const method = req.method ?? 'GET';
  const match = table.match(method, url.pathname);
  const note: RequestNote = { route: match?.pattern ?? 'unknown' };
  if (match?.raw['id'] !== undefined) note.taskId = match.raw['id'];
  logWhenClosed(req, res, note, log);
  // Probes (`GET /health`, `GET /ready`) need no token and are answered while draining: a draining service is alive.
  const probe = match !== undefined && match.routes.every((r) => r.open === 'probe');
  try {
    if (state.draining && !probe) {
      // The Host comes back (a restart) or another one serves: a client retries, never gives up.
      res.setHeader('retry-after', String(state.retryAfter));
      throw new ApiError(503, 'draining', 'the service is draining: retry after Retry-After seconds');
    }
    await dispatch(match, { req, res, url, method, note, access, probe });
  } catch (error) {
    sendError(res, error instanceof HostError ? apiErrorOf(error) : error);
  }
}

/**
 * Runs the request's route: the token is checked first (but for a route that takes none, and the
 * probes' paths), so a stranger learns nothing of which routes exist; then 404 `route_not_found`
 * for a path no route has, 405 `method_not_allowed` (with `Allow`) for a method it does not answer.
 */
async function dispatch(
  match: Match | undefined,
  r: {
    req: IncomingMessage;
    res: ServerResponse;
    url: URL;
    method: string;
    note: RequestNote;
    access: AccessPolicy;
    probe: boolean;
  },
): Promise<void> {
  if (!match?.route?.open && !r.probe) checkAccess(r.req, r.url, r.access);
  if (!match) throw new ApiError(404, 'route_not_found', `no route ${r.method} ${r.url.pathname}`);
  if (!match.route) throw methodNotAllowed(r.res, r.method, r.url.pathname, match.routes);
  const route = match.route;
  await route.handle(await routeRequest({ ...match, route }, r.req, r.res, r.url, r.note));
}

/** Sets the request's id and frame policy, and logs its `request` line when it closes. */
function logWhenClosed(req: IncomingMessage, res: ServerResponse, note: RequestNote, log: Logger | undefined): void {
  const started = process.hrtime.bigint();
  const given = req.headers['x-request-id'];
  const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', requestId);
  res.setHeader('content-security-policy', FRAME_ANCESTORS);
  res.once('close', () =>
    log?.info(
      {
        requestId,
        method: req.method,
        route: note.route,
        status: res.statusCode,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
        ...(note.taskId !== undefined ? { taskId: note.taskId } : {}),
      },
      'request',
    ),
  );
}
