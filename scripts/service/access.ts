import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApiError } from './http-io.js';

/** Where the service listens: a unix socket, or a TCP host and port. */
export type Listener = { kind: 'socket'; path: string } | { kind: 'tcp'; host: string; port: number };

/**
 * The only TCP hosts counted as loopback. Every other address, including the rest of 127.0.0.0/8
 * (`127.0.0.2`) and names such as `localhost` (resolution is not ours to trust), is treated as
 * non-loopback and needs a token.
 */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', '::1'];

export function isLoopback(listener: Listener): boolean {
  return listener.kind === 'socket' || LOOPBACK_HOSTS.includes(listener.host);
}

/** Host header names a browser uses for a loopback listener; others are refused (DNS rebinding). */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export interface AccessPolicy {
  listener: Listener;
  /** Bearer token every request must carry; required for a non-loopback listener. */
  token?: string;
}

/**
 * Checks one request against the policy, throwing ApiError 401 `unauthorized` (missing or wrong
 * token) or 403 `forbidden_host` (a loopback TCP listener reached under a foreign Host name).
 * GET requests may carry the token as `?access_token=` because a browser's EventSource cannot
 * set headers.
 */
export function checkAccess(req: IncomingMessage, url: URL, policy: AccessPolicy): void {
  if (policy.token !== undefined) {
    const header = req.headers.authorization ?? '';
    const given = header.startsWith('Bearer ')
      ? header.slice(7)
      : req.method === 'GET'
        ? (url.searchParams.get('access_token') ?? '')
        : '';
    if (!sameSecret(given, policy.token))
      throw new ApiError(401, 'unauthorized', 'this listener requires Authorization: Bearer <token>');
  } else if (policy.listener.kind === 'tcp') {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (!LOOPBACK_NAMES.includes(host))
      throw new ApiError(
        403,
        'forbidden_host',
        `Host ${JSON.stringify(req.headers.host ?? '')} is not a loopback name`,
      );
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
