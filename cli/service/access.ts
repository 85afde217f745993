import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './http-io.js';

/** Where the service listens: a unix socket, or a TCP host and port. */
export type Listener = { kind: 'socket'; path: string } | { kind: 'tcp'; host: string; port: number };

/**
 * The only TCP hosts counted as loopback. Every other address, including the rest of 127.0.0.0/8
 * (`127.0.0.2`) and names such as `localhost` (resolution is not ours to trust), is treated as
 * non-loopback.
 */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', '::1'];

export function isLoopback(listener: Listener): boolean {
  return listener.kind === 'socket' || LOOPBACK_HOSTS.includes(listener.host);
}

/**
 * The refusal of a listener that is not loopback without a token (400 `token_required`), or null.
 * `serve` asks before it opens anything, `startService` again before it listens.
 */
export function tokenRefusal(listener: Listener, token: string | undefined): ApiError | null {
  if (isLoopback(listener) || token) return null;
  const host = listener.kind === 'tcp' ? listener.host : '';
  return new ApiError(
    400,
    'token_required',
    `listening on ${host} needs a token: --token-file PATH, ORDIVON_TOKEN or --token (only 127.0.0.1, ::1 and unix sockets are loopback)`,
    { path: '--host' },
  );
}

/** Host header names a browser uses for a loopback listener; others are refused (DNS rebinding). */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** A secret for a token, a login code or a session: 32 random bytes, base64url. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export interface AccessPolicy {
  listener: Listener;
  /**
   * Bearer token every request must carry. `startService` always sets one for a TCP listener
   * (generated when none is given); a 0600 unix socket needs none, its mode being the access check.
   */
  token?: string;
  /** Sessions opened by a login code (`/login`): a request may carry one as its cookie instead of the token. */
  sessions?: Sessions;
}

/**
 * The page's logins. A login code is single-use and distinct from the bearer token, so the token
 * never sits in a URL a browser, proxy or shell history records; the code is exchanged once for a
 * session kept in an HttpOnly, SameSite=Strict cookie.
 */
export class Sessions {
  private readonly codes = new Set<string>();
  private readonly open = new Set<string>();

  /** @param cookie the cookie's name (per port: browsers do not scope cookies by port). */
  constructor(readonly cookie: string) {}

  /** A new single-use login code. */
  code(): string {
    const code = newSecret();
    this.codes.add(code);
    return code;
  }

  /** Spends a login code: the new session's secret, or null for a code that is wrong or used. */
  redeem(code: string): string | null {
    const match = [...this.codes].find((c) => sameSecret(c, code));
    if (match === undefined) return null;
    this.codes.delete(match);
    const session = newSecret();
    this.open.add(session);
    return session;
  }

  /** Whether the request's cookie names an open session. */
  carries(req: IncomingMessage): boolean {
    const value = cookieValue(req.headers.cookie ?? '', this.cookie);
    return value !== undefined && [...this.open].some((s) => sameSecret(s, value));
  }
}

function cookieValue(header: string, name: string): string | undefined {
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The Host-header check of a loopback TCP listener (403 `forbidden_host`: DNS rebinding). */
export function checkHost(req: IncomingMessage, policy: AccessPolicy): void {
  if (policy.listener.kind !== 'tcp' || !LOOPBACK_HOSTS.includes(policy.listener.host)) return;
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  if (!LOOPBACK_NAMES.includes(host))
    throw new ApiError(403, 'forbidden_host', `Host ${JSON.stringify(req.headers.host ?? '')} is not a loopback name`);
}

/**
 * Checks one request against the policy, throwing ApiError 403 `forbidden_host` (a loopback TCP
 * listener reached under a foreign Host name) or 401 `unauthorized` (no valid token or session).
 * The token comes as `Authorization: Bearer`, or for a GET as `?access_token=` (a browser's
 * EventSource cannot set headers); a session as the cookie `/login` set.
 */
export function checkAccess(req: IncomingMessage, url: URL, policy: AccessPolicy): void {
  checkHost(req, policy);
  if (policy.token === undefined) return;
  const header = req.headers.authorization ?? '';
  const given = header.startsWith('Bearer ')
    ? header.slice(7)
    : req.method === 'GET'
      ? (url.searchParams.get('access_token') ?? '')
      : '';
  if (sameSecret(given, policy.token)) return;
  if (given === '' && policy.sessions?.carries(req)) return;
  throw new ApiError(401, 'unauthorized', 'this listener requires Authorization: Bearer <token> (see service.json)');
}

/**
 * `GET /login?token=<code>`: a single-use code, never the bearer token, exchanged for an
 * HttpOnly, SameSite=Strict session cookie, then a redirect to the page. A wrong or used code is
 * 401 `unauthorized`; the Host-header check applies as to every route.
 */
export function answerLogin(req: IncomingMessage, res: ServerResponse, url: URL, policy: AccessPolicy): void {
  checkHost(req, policy);
  const sessions = policy.sessions;
  const session = sessions?.redeem(url.searchParams.get('token') ?? '') ?? null;
  if (!sessions || session === null)
    throw new ApiError(401, 'unauthorized', 'this login code is wrong or was used: ask for a new login URL');
  res.writeHead(303, {
    location: '/',
    'set-cookie': `${sessions.cookie}=${session}; HttpOnly; SameSite=Strict; Path=/`,
    'cache-control': 'no-store',
  });
  res.end();
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
