import type { Logger } from 'pino';
import type { Supervisor, SendResult } from '../../kernel/index.js';
import type { TaskSpecInput } from '../../objects/index.js';
import { taskShowView } from '../../views/index.js';
import { taskGraph } from '../../machines/index.js';
import { loadWorkload, workloadNames } from '../workload.js';
import { answerLogin, type AccessPolicy } from './access.js';
import type { ServiceMetrics } from './metrics.js';
import { ShowQuery, StreamQuery, WorkloadRequest } from './api-schemas.js';
import { AnswerBody } from './decide-answer.js';
import { ApiError, httpStatusOf, sendJson } from './http-io.js';
import { PAGE_HTML } from './page.js';
import { readiness } from './readiness.js';
import { answerRequest, listRequests, openRequest } from './request-routes.js';
import { LibraryInput, parsed, requireTask, route, type AnyRoute } from './route-table.js';
import { pageRoutes } from './story-routes.js';
import type { SseHub } from './sse-hub.js';
import { openStream } from './stream-route.js';
import { packageVersion } from '../version.js';

/** What the control API's routes answer from. */
export interface RouteContext {
  sup: Supervisor;
  access: AccessPolicy;
  hub: SseHub;
  /** What `GET /metrics` answers (none: that route is 404). */
  metrics?: ServiceMetrics | undefined;
  log?: Logger | undefined;
  draining(): boolean;
}

/** Every response: no page of this service may be framed (its buttons answer DecisionRequests). */
export const FRAME_ANCESTORS = "frame-ancestors 'none'";

/** HTTP status of a `send` result: 200 whenever the event was written (admitted or retained) or already was (a duplicate), else its code's (`HTTP_STATUS_OF_CODE`). */
export function statusOfSend(result: SendResult): number {
  switch (result.kind) {
    case 'admitted':
    case 'retained':
    case 'duplicate':
      return 200;
    case 'refused':
      return httpStatusOf(result.code);
  }
}

/** The control API's route table (docs/service.md#routes): the service's own routes, the Tasks' and the page's. */
export function controlRoutes(c: RouteContext): AnyRoute[] {
  return [...serviceRoutes(c), ...taskRoutes(c), ...pageRoutes(c.sup)];
}

/** The page, the probes, the login, the status, the metrics, the statechart and the event stream. */
function serviceRoutes(c: RouteContext): AnyRoute[] {
  const { sup, access, metrics } = c;
  return [
    route({
      method: 'GET',
      pattern: '/',
      handle: ({ res }) => {
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          'content-security-policy': `default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; ${FRAME_ANCESTORS}`,
        });
        res.end(PAGE_HTML);
      },
    }),
    // Probes carry no token (a kubelet's, a load balancer's), and say nothing a stranger could use.
    route({
      method: 'GET',
      pattern: '/health',
      open: 'probe',
      handle: ({ res }) => sendJson(res, 200, { status: 'ok' }),
    }),
    route({
      method: 'GET',
      pattern: '/ready',
      open: 'probe',
      handle: ({ res }) => {
        const ready = readiness(sup, c.draining());
        sendJson(res, ready.status === 'ready' ? 200 : 503, ready);
      },
    }),
    route({
      method: 'GET',
      pattern: '/login',
      open: 'login',
      handle: ({ req, res, url }) => answerLogin(req, res, url, access),
    }),
    route({
      method: 'POST',
      pattern: '/login',
      handle: ({ req, res }) => {
        if (!access.sessions) throw new ApiError(404, 'route_not_found', 'a unix socket serves no login');
        sendJson(res, 201, { login: `http://${req.headers.host ?? ''}/login?token=${access.sessions.code()}` });
      },
    }),
    route({ method: 'GET', pattern: '/status', handle: ({ res }) => sendJson(res, 200, status(c)) }),
    ...(metrics
      ? [
          route({
            method: 'GET',
            pattern: '/metrics',
            handle: async ({ res }) => {
              const text = await metrics.text();
              res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
              res.end(text);
            },
          }),
        ]
      : []),
    route({ method: 'GET', pattern: '/graph', handle: ({ res }) => sendJson(res, 200, taskGraph()) }),
    route({
      method: 'GET',
      pattern: '/events',
      query: StreamQuery,
      handle: async ({ req, res, query }) => {
        if (query.taskId) await requireTask(sup, query.taskId);
        return openStream(req, res, query, sup, c.hub);
      },
    }),
  ];
}

/** What `GET /status` answers. */
function status({ sup, draining }: RouteContext) {
  return {
    status: sup.status,
    ready: readiness(sup, draining()),
    database: sup.databaseUnreachable(),
    version: packageVersion(),
    root: sup.root,
    hostId: sup.hostId ?? null,
    unserved: sup.clusterProblems(),
    pid: process.pid,
    tasks: sup.listTasks().length,
    boot: sup.bootReport(),
    checkpoints: sup.checkpoints(),
  };
}

/** The Tasks: list and create, show, events (read and send), DecisionRequests (list, open, answer). */
function taskRoutes(c: RouteContext): AnyRoute[] {
  const { sup, metrics } = c;
  return [
    route({ method: 'GET', pattern: '/tasks', handle: ({ res }) => sendJson(res, 200, sup.listTasks()) }),
    route({
      method: 'POST',
      pattern: '/tasks',
      body: LibraryInput,
      handle: async ({ res, body, note }) => {
        const spec = body !== null && typeof body === 'object' && 'workload' in body ? workloadSpec(body) : body;
        // `invalid_spec` (400, with its field as `path`) and `task_exists` (409) are HostErrors: `apiErrorOf`.
        const done = metrics?.time('create');
        const created = await sup.createTask(spec as TaskSpecInput).finally(() => done?.());
        note.taskId = created.taskId;
        sendJson(res, 201, created);
      },
    }),
    route({
      method: 'GET',
      pattern: '/tasks/:id',
      query: ShowQuery,
      handle: async ({ res, params: { id }, query }) => {
        const { view, events, getObject, servedBy, elsewhere } = await requireTask(sup, id);
        const { revision, state, frontier, context, spec } = view;
        const served = servedBy !== undefined ? { served: { servedBy, elsewhere } } : {};
        const object = (digest: string) => getObject(digest).body;
        const withEvents = query.events === '1' || query.events === 'true';
        const queued = view.queued ?? null;
        const shown = {
          taskId: id,
          revision,
          state,
          frontier,
          title: spec.title,
          queued,
          ...served,
          context,
          events,
          object,
        };
        const child = (childId: string) => {
          const found = sup.getTask(childId);
          return found ? { state: found.state, generation: found.context.generation } : undefined;
        };
        sendJson(res, 200, taskShowView({ ...shown, withEvents, child }));
      },
    }),
    route({
      method: 'GET',
      pattern: '/tasks/:id/events',
      handle: async ({ res, params: { id } }) => {
        const { events, servedBy, elsewhere } = await requireTask(sup, id);
        sendJson(res, 200, { taskId: id, ...(servedBy !== undefined ? { servedBy, elsewhere } : {}), events });
      },
    }),
    route({
      method: 'POST',
      pattern: '/tasks/:id/events',
      // The supervisor's parse is the event's one: an unknown Task is answered first (404), a
      // malformed event `invalid_event` as a SendResult, as the library's `send` answers them.
      body: LibraryInput,
      handle: async ({ res, params: { id }, body }) => {
        const result = await sendEvent(c, id, body);
        sendJson(res, statusOfSend(result), { taskId: id, ...result });
      },
    }),
    route({
      method: 'GET',
      pattern: '/tasks/:id/requests',
      handle: async ({ res, params: { id } }) => sendJson(res, 200, listRequests(id, await requireTask(sup, id))),
    }),
    route({
      method: 'POST',
      pattern: '/tasks/:id/requests',
      body: LibraryInput,
      handle: async ({ res, params: { id }, body }) => {
        const opened = await openRequest(sup, id, body);
        sendJson(res, opened.status, opened.body);
      },
    }),
    route({
      method: 'POST',
      pattern: '/tasks/:id/requests/:requestId/answer',
      body: AnswerBody,
      handle: async ({ res, params: { id, requestId }, body }) => {
        const answered = await answerRequest(sup, id, requestId, body);
        sendJson(res, answered.status, answered.body);
      },
    }),
  ];
}

/** Sends an event from outside; a refusal that wrote nothing is counted and logged here (a written one is logged at its commit). */
async function sendEvent({ sup, metrics, log }: RouteContext, taskId: string, body: unknown): Promise<SendResult> {
  const done = metrics?.time('send');
  const result = await sup.sendRaw(taskId, body).finally(() => done?.());
  if (result.kind === 'refused') {
    metrics?.refusedUnwritten(result.code);
    const { revision, code } = result;
    const line = { taskId, event: eventType(body), revision, admitted: false, written: false, code };
    log?.warn(line, 'transition refused');
  }
  return result;
}

function eventType(body: unknown): string | undefined {
  const type = body !== null && typeof body === 'object' ? (body as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : undefined;
}

/** `POST /tasks` with `{ "workload": NAME }`: that workload's spec (with `taskId`, when given). */
function workloadSpec(body: object) {
  const request = parsed(WorkloadRequest.safeParse(body), 'invalid_spec');
  if (!workloadNames().includes(request.workload))
    throw new ApiError(
      400,
      'invalid_spec',
      `no workload named ${request.workload} (known: ${workloadNames().join(', ')})`,
      { path: 'workload' },
    );
  const spec = loadWorkload(request.workload).spec;
  return request.taskId ? { ...spec, taskId: request.taskId } : spec;
}
