import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { zodIssue } from '../../base/index.js';
import type { Supervisor, TaskReading } from '../../kernel/index.js';
import { TaskIdParam } from './api-schemas.js';
import { RequestIdParam } from './decide-answer.js';
import { ApiError, readJson } from './http-io.js';

/** The methods the control API answers. */
export type Method = 'GET' | 'POST';

/** Every path parameter a pattern may name (`:id`), with the schema it is parsed with. */
const PARAMS = { id: TaskIdParam, requestId: RequestIdParam } as const;
type ParamName = keyof typeof PARAMS;

/** The `:name` segments of a pattern, as a type (`'/tasks/:id/events'` → `'id'`). */
export type ParamsOf<P extends string> = P extends `${string}:${infer N}/${infer Rest}`
  ? N | ParamsOf<Rest>
  : P extends `${string}:${infer N}`
    ? N
    : never;

/** What a route's handler is given: everything of the request already matched and parsed. */
export interface RouteRequest<P extends string, Q, B> {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Readonly<Record<ParamsOf<P>, string>>;
  query: Q;
  body: B;
  /** What the request's log line reports beyond the route: the Task a handler created. */
  note: RequestNote;
}

/** What a request line reports beyond method and status: the route pattern and the Task. */
export interface RequestNote {
  route: string;
  taskId?: string;
}

/**
 * One row of the control API's route table: a method and a path pattern (`:name` segments are
 * parameters, parsed with `PARAMS`), the schemas of its query and JSON body, and the handler that
 * answers. Whatever does not parse is refused before the handler runs, 400 `invalid_request` with
 * the first issue's field as `path`, nothing written. A route with
 * no `body` reads none.
 */
export interface Route<P extends string = string, Q = unknown, B = unknown> {
  method: Method;
  pattern: P;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /**
   * Answered without the token: `probe` (a load balancer's, answered while draining too) or
   * `login` (its one-time code is the credential).
   */
  open?: 'probe' | 'login';
  handle(request: RouteRequest<P, Q, B>): unknown;
}

/** A table's row with its types erased (each is checked where it is written, by `route`). */
export type AnyRoute = Route<string, any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One route, typed from its pattern and schemas; a parameter `PARAMS` has no schema for does not compile. */
export function route<P extends string, Q = undefined, B = undefined>(
  row: Route<P, Q, B> & (ParamsOf<P> extends ParamName ? unknown : { pattern: never }),
): AnyRoute {
  return row as AnyRoute;
}

/**
 * A body the control API hands to the library as it was read: the library's own parse (an event's
 * `EventInput`, a Task spec, an `OperatorRequestInput`) is its one parse, and answers what does
 * not parse as the library does (an unknown Task first; `invalid_event` as a `SendResult`).
 */
export const LibraryInput = z.unknown();

/** A request matched against the table: the routes of its path (one per method) and the raw parameters. */
export interface Match {
  /** Every route of the path's pattern, one per method. */
  routes: AnyRoute[];
  /** The route of the request's method, if the path has one. */
  route: AnyRoute | undefined;
  pattern: string;
  /** The parameters as the path gave them (percent-decoded), not yet parsed. */
  raw: Record<string, string>;
  /** The schema of the pattern's parameters (each named as its `path` when it does not parse). */
  params: z.ZodType<Record<string, string>>;
}

/**
 * The control API's routes, matched once per request. A path no route has is 404
 * `route_not_found`; a method its routes do not answer is 405 `method_not_allowed` with `Allow`.
 */
export class RouteTable {
  private readonly patterns: Array<Omit<Match, 'route' | 'raw'> & { segments: string[] }> = [];

  constructor(routes: readonly AnyRoute[]) {
    for (const r of routes) {
      const known = this.patterns.find((p) => p.pattern === r.pattern);
      if (known?.routes.some((k) => k.method === r.method)) throw new Error(`two routes for ${r.method} ${r.pattern}`);
      if (known) {
        known.routes.push(r);
        continue;
      }
      const segments = r.pattern.split('/').filter(Boolean);
      const names = segments.filter((s) => s.startsWith(':')).map((s) => s.slice(1) as ParamName);
      const params = z.object(Object.fromEntries(names.map((name) => [name, PARAMS[name]])));
      this.patterns.push({ pattern: r.pattern, segments, routes: [r], params });
    }
  }

  /** The routes of `pathname` and the route of `method` among them; undefined when no pattern matches the path. */
  match(method: string, pathname: string): Match | undefined {
    const parts = pathname.split('/').filter(Boolean);
    for (const { segments, ...found } of this.patterns) {
      const raw = bind(segments, parts);
      if (raw) return { ...found, route: found.routes.find((r) => r.method === method), raw };
    }
    return undefined;
  }
}

/** The parameters of `parts` against a pattern's segments; undefined when they do not match. */
function bind(segments: string[], parts: string[]): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  const raw: Record<string, string> = {};
  for (const [i, segment] of segments.entries()) {
    const part = parts[i]!;
    if (segment.startsWith(':')) raw[segment.slice(1)] = decoded(part);
    else if (segment !== part) return undefined;
  }
  return raw;
}

/** A percent-decoded segment; one that does not decode is kept as given (its parameter's schema refuses it). */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** Refuses a method a matched path has no route for: 405 with `Allow` naming those it has. */
export function methodNotAllowed(res: ServerResponse, method: string, pathname: string, routes: AnyRoute[]): ApiError {
  const allowed = routes.map((r) => r.method);
  res.setHeader('allow', allowed.join(', '));
  return new ApiError(405, 'method_not_allowed', `${method} ${pathname}: use ${allowed.join(' or ')}`);
}

/** A parsed parameter, query or body; one that does not parse is 400 `code` at its first issue's path. */
export function parsed<T>(result: z.ZodSafeParseResult<T>, code: 'invalid_request' | 'invalid_spec'): T {
  if (result.success) return result.data;
  const { path, message } = zodIssue(code, result.error);
  throw new ApiError(400, code, `${path}: ${message}`, { path });
}

/** The request as its route takes it: parameters, then query, then body, each parsed once (the first refusal wins). */
export async function routeRequest(
  match: Match & { route: AnyRoute },
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  note: RequestNote,
): Promise<RouteRequest<string, unknown, unknown>> {
  const { route: r, raw } = match;
  const params = parsed(match.params.safeParse(raw), 'invalid_request');
  const given = Object.fromEntries(url.searchParams);
  delete given.access_token;
  const query = r.query ? parsed(r.query.safeParse(given), 'invalid_request') : undefined;
  const body = r.body ? parsed(r.body.safeParse(await readJson(req)), 'invalid_request') : undefined;
  return { req, res, url, params, query, body, note };
}

/** Any Task of the cluster, read-only when another Host serves it (`elsewhere`); 404 `task_not_found` when there is none. */
export async function requireTask(sup: Supervisor, id: string): Promise<TaskReading> {
  const reading = await sup.readTask(id);
  if (!reading) throw new ApiError(404, 'task_not_found', `no task ${id}`);
  return reading;
}
