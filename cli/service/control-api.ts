import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { zodIssue } from '../../base/index.js';
import { HostError, EventInput, sendRefused, type Supervisor, type SendResult } from '../../kernel/index.js';
import type { TaskSpecInput } from '../../objects/index.js';
import { taskShowView } from '../../views/index.js';
import { taskGraph } from '../../machines/index.js';
import { loadWorkload, workloadNames } from '../workload.js';
import { answerLogin, checkAccess, type AccessPolicy } from './access.js';
import type { ServiceMetrics } from './metrics.js';
import { ShowQuery, StreamQuery, TaskIdParam, WorkloadRequest } from './api-schemas.js';
import { ApiError, apiErrorOf, httpStatusOf, readJson, sendError, sendJson } from './http-io.js';
import { PAGE_HTML } from './page.js';
import { readiness } from './readiness.js';
import { answerRequest, listRequests, openRequest } from './request-routes.js';
import { pageRoute } from './story-routes.js';
import { SseHub, type SseHubOptions } from './sse-hub.js';
import { openStream } from './stream-route.js';
import { packageVersion } from '../version.js';

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

/** Every response: no page of this service may be framed (its buttons answer DecisionRequests). */
const FRAME_ANCESTORS = "frame-ancestors 'none'";

/** An `X-Request-Id` a client may give (echoed and logged); anything else is replaced by a new one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** What a request line reports beyond method and status: the route pattern and the Task. */
interface RequestNote {
  route: string;
  taskId?: string;
}

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

/** HTTP status of a `send` result: 200 whenever the event was written (admitted or retained), else its code's (`HTTP_STATUS_OF_CODE`). */
export function statusOfSend(result: SendResult): number {
  if (result.written || result.duplicate) return 200;
  return httpStatusOf(result.code ?? 'invalid_transition');
}

/** A parsed route parameter, query or body; one that does not parse is 400 `code` at its first issue's path. */
const parsed = <T>(result: z.ZodSafeParseResult<T>, code: 'invalid_request' | 'invalid_spec'): T => {
  if (result.success) return result.data;
  const { path, message } = zodIssue(code, result.error);
  throw new ApiError(400, code, `${path}: ${message}`, { path });
};

/**
 * The control API over a running supervisor (routes in docs/service.md). Every
 * path parameter, query and body is parsed with zod before the supervisor sees it; a refused
 * request writes nothing. Errors are `{ error: { code, message, path? } }`; `send` answers
 * with the library's `SendResult` and a status from `statusOfSend`.
 */
export function createControlApi(options: ControlApiOptions): ControlApi {
  const sup = options.supervisor;
  const hub = new SseHub(options.stream);
  // Other Hosts' commits only of the Tasks a connected stream follows (any, for an all-Tasks stream).
  const unsubscribe = sup.subscribe((c) => hub.publish(c), { remote: (id) => hub.follows(id) });
  const inflight = new Set<Promise<void>>();
  let draining = false;
  let retryAfter = 1;

  const taskId = (raw: string): string => parsed(TaskIdParam.safeParse(decodeURIComponent(raw)), 'invalid_request');
  // Any Task of the cluster, read-only when another Host serves it (`elsewhere`).
  const requireTask = async (id: string) => {
    const reading = await sup.readTask(id);
    if (!reading) throw new ApiError(404, 'task_not_found', `no task ${id}`);
    return reading;
  };

  async function route(req: IncomingMessage, res: ServerResponse, note: RequestNote): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://service');
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean);
    note.route = routePattern(parts);
    if (parts[0] === 'tasks' && parts[1] !== undefined) note.taskId = decodeURIComponent(parts[1]);
    if (parts[0] === 'login' && parts.length === 1 && method === 'GET')
      return answerLogin(req, res, url, options.access);
    const only = (...allowed: string[]) => {
      if (!allowed.includes(method))
        throw new ApiError(405, 'method_not_allowed', `${method} ${url.pathname}: use ${allowed.join(' or ')}`);
    };
    // Probes carry no token (a kubelet's, a load balancer's): they are answered before the access
    // check, and say nothing a stranger could use.
    if (isProbe(url.pathname)) {
      only('GET');
      if (parts[0] === 'health') return sendJson(res, 200, { status: 'ok' });
      const ready = readiness(sup, draining);
      return sendJson(res, ready.status === 'ready' ? 200 : 503, ready);
    }
    checkAccess(req, url, options.access);
    const query = Object.fromEntries(url.searchParams);
    delete query.access_token;

    if (parts.length === 0) {
      only('GET');
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': `default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; ${FRAME_ANCESTORS}`,
      });
      res.end(PAGE_HTML);
      return;
    }
    if (parts[0] === 'login' && parts.length === 1) {
      only('GET', 'POST');
      const sessions = options.access.sessions;
      if (!sessions) throw new ApiError(404, 'route_not_found', 'a unix socket serves no login');
      return sendJson(res, 201, { login: `http://${req.headers.host ?? ''}/login?token=${sessions.code()}` });
    }
    if (parts[0] === 'status' && parts.length === 1) {
      only('GET');
      return sendJson(res, 200, {
        status: sup.status,
        ready: readiness(sup, draining),
        database: sup.databaseUnreachable(),
        version: packageVersion(),
        root: sup.root,
        hostId: sup.hostId ?? null,
        unserved: sup.clusterProblems(),
        pid: process.pid,
        tasks: sup.listTasks().length,
        boot: sup.bootReport(),
        checkpoints: sup.checkpoints(),
      });
    }
    if (parts[0] === 'metrics' && parts.length === 1 && options.metrics) {
      only('GET');
      const text = await options.metrics.text();
      res.writeHead(200, { 'content-type': options.metrics.contentType, 'cache-control': 'no-store' });
      res.end(text);
      return;
    }
    if (parts[0] === 'graph' && parts.length === 1) {
      only('GET');
      return sendJson(res, 200, taskGraph());
    }
    if (parts[0] === 'events' && parts.length === 1) {
      only('GET');
      const q = parsed(StreamQuery.safeParse(query), 'invalid_request');
      if (q.taskId) await requireTask(q.taskId);
      return openStream(req, res, q, sup, hub);
    }
    if (parts[0] === 'tasks' && parts.length === 1) {
      only('GET', 'POST');
      if (method === 'GET') return sendJson(res, 200, sup.listTasks());
      const body = await readJson(req);
      const spec = body !== null && typeof body === 'object' && 'workload' in body ? workloadSpec(body) : body;
      // `invalid_spec` (400, with its field as `path`) and `task_exists` (409) are HostErrors: `apiErrorOf`.
      const done = options.metrics?.time('create');
      const created = await sup.createTask(spec as TaskSpecInput).finally(() => done?.());
      note.taskId = created.taskId;
      return sendJson(res, 201, created);
    }
    if (parts[0] === 'tasks' && parts.length === 2) {
      only('GET');
      const id = taskId(parts[1]!);
      const q = parsed(ShowQuery.safeParse(query), 'invalid_request');
      const { view, events, getObject, servedBy, elsewhere } = await requireTask(id);
      const { revision, state, frontier, context, spec } = view;
      return sendJson(
        res,
        200,
        taskShowView({
          taskId: id,
          revision,
          state,
          frontier,
          title: spec.title,
          ...(servedBy !== undefined ? { served: { servedBy, elsewhere } } : {}),
          context,
          events,
          object: (digest) => getObject(digest).body,
          withEvents: q.events === '1' || q.events === 'true',
        }),
      );
    }
    if (parts[0] === 'tasks' && parts.length === 3 && parts[2] === 'events') {
      only('GET', 'POST');
      const id = taskId(parts[1]!);
      if (method === 'GET') {
        const { events, servedBy, elsewhere } = await requireTask(id);
        return sendJson(res, 200, { taskId: id, ...(servedBy !== undefined ? { servedBy, elsewhere } : {}), events });
      }
      const body = await readJson(req);
      const event = EventInput.safeParse(body);
      // An unknown Task is answered first (404), as the library's `send` does.
      if (!event.success && sup.getTask(id)) {
        const { code, path, message } = zodIssue('invalid_event', event.error);
        const view = sup.getTask(id);
        const refusal = sendRefused(
          { code, path, detail: message },
          { revision: view?.revision ?? 0, state: view?.state ?? 'none' },
        );
        return sendJson(res, 400, { taskId: id, ...refusal });
      }
      // The raw body goes to the supervisor, which parses it again: one code path with the library's.
      const done = options.metrics?.time('send');
      const result = await sup.sendRaw(id, body).finally(() => done?.());
      if (!result.written && !result.duplicate && result.code !== undefined) {
        options.metrics?.refusedUnwritten(result.code);
        options.log?.warn(
          {
            taskId: id,
            event: eventType(body),
            revision: result.revision,
            admitted: false,
            written: false,
            code: result.code,
          },
          'transition refused',
        );
      }
      return sendJson(res, statusOfSend(result), { taskId: id, ...result });
    }
    if (parts[0] === 'tasks' && parts.length === 3 && parts[2] === 'requests') {
      only('GET', 'POST');
      const id = taskId(parts[1]!);
      if (method === 'POST') {
        const opened = await openRequest(sup, id, req);
        return sendJson(res, opened.status, opened.body);
      }
      return sendJson(res, 200, listRequests(id, await requireTask(id)));
    }
    if (parts[0] === 'tasks' && parts.length === 5 && parts[2] === 'requests' && parts[4] === 'answer') {
      only('POST');
      const answered = await answerRequest(sup, taskId(parts[1]!), decodeURIComponent(parts[3]!), req);
      return sendJson(res, answered.status, answered.body);
    }
    if (await pageRoute({ sup, method, parts, res, only, taskId, requireTask })) return;
    throw new ApiError(404, 'route_not_found', `no route ${method} ${url.pathname}`);
  }

  return {
    hub,
    handle(req, res) {
      const started = process.hrtime.bigint();
      const given = req.headers['x-request-id'];
      const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('x-request-id', requestId);
      res.setHeader('content-security-policy', FRAME_ANCESTORS);
      const note: RequestNote = { route: 'unknown' };
      res.once('close', () =>
        options.log?.info(
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
      // A draining service is alive, and its probes say so (`/ready`: 503 `draining`).
      if (draining && !isProbe(new URL(req.url ?? '/', 'http://service').pathname)) {
        // The Host comes back (a restart) or another one serves: a client retries, never gives up.
        res.setHeader('retry-after', String(retryAfter));
        sendError(res, new ApiError(503, 'draining', 'the service is draining: retry after Retry-After seconds'));
        return;
      }
      const done = route(req, res, note)
        .catch((error) => {
          sendError(res, error instanceof HostError ? apiErrorOf(error) : error);
        })
        .finally(() => inflight.delete(done));
      inflight.add(done);
    },
    async drain({ retryAfterSeconds = 1 } = {}) {
      draining = true;
      retryAfter = retryAfterSeconds;
      unsubscribe();
      hub.close();
      await Promise.all([...inflight]);
    },
  };
}

/** `GET /health` (liveness) and `GET /ready` (readiness): no token, and answered while draining. */
function isProbe(pathname: string): boolean {
  return pathname === '/health' || pathname === '/ready';
}

/** The route a request matched, with its parameters as names (`/tasks/:id/events`): a log field of bounded cardinality. */
function routePattern(parts: string[]): string {
  if (parts.length === 0) return '/';
  if (parts[0] !== 'tasks')
    return parts.length === 1 || parts.join('/') === 'graph/layout' ? `/${parts.join('/')}` : 'unknown';
  const names = ['tasks', ':id', parts[2], ':requestId', parts[4]];
  if (
    parts.length > names.length ||
    (parts.length >= 3 && !['events', 'requests', 'outcome', 'story'].includes(parts[2]!))
  )
    return 'unknown';
  return `/${names.slice(0, parts.length).join('/')}`;
}

function eventType(body: unknown): string | undefined {
  const type = body !== null && typeof body === 'object' ? (body as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : undefined;
}

function workloadSpec(body: object) {
  const request = parsed(WorkloadRequest.safeParse(body), 'invalid_spec');
  if (!workloadNames().includes(request.workload))
    throw new ApiError(
      400,
      'invalid_spec',
      `no workload named ${request.workload} (known: ${workloadNames().join(', ')})`,
      {
        path: 'workload',
      },
    );
  const spec = loadWorkload(request.workload).spec;
  return request.taskId ? { ...spec, taskId: request.taskId } : spec;
}
