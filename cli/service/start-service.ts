import { chmodSync, existsSync, lstatSync, unlinkSync } from 'node:fs';
import { createConnection } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { Supervisor } from '../../kernel/index.js';
import { newSecret, Sessions, tokenRefusal, type Listener } from './access.js';
import { createControlApi, type ControlApi } from './control-api.js';
import { ApiError } from './http-io.js';
import { writeServiceFile } from './service-file.js';
import type { ServiceMetrics } from './metrics.js';

export interface ServiceOptions {
  supervisor: Supervisor;
  listener: Listener;
  /**
   * Bearer token; required (else `token_required`) when the listener is not loopback. A loopback
   * TCP listener without one gets a generated token, written to `service.json` only.
   */
  token?: string;
  /** Where request lines go (none: not logged). */
  log?: Logger;
  /** Counters `GET /metrics` answers (none: that route is 404). */
  metrics?: ServiceMetrics;
  /** How long draining waits for in-flight requests before cutting their connections (default 10 s). */
  drainGraceMs?: number;
}

export interface RunningService {
  server: Server;
  api: ControlApi;
  /** `http://127.0.0.1:PORT`, or `http://localhost` for a unix socket. */
  url: string;
  listener: Listener;
  /** The bearer token requests need (undefined: a unix socket without `--token`). */
  token: string | undefined;
  /** A new single-use login URL for the page (`/login?token=<code>`), or null on a unix socket. */
  loginUrl(): string | null;
  /**
   * Starts draining, the listener kept open: `service.json` is removed, every new request is
   * answered 503 `draining` with `Retry-After: retryAfterSeconds` (default 1), SSE streams end;
   * resolves once the requests in flight have answered. Their transitions commit.
   */
  drain(options?: { retryAfterSeconds?: number }): Promise<void>;
  /**
   * Drains (if `drain` was not called), then closes the listener. The supervisor is not stopped
   * here (its owner stops it next, which lets in-flight transitions commit).
   */
  close(): Promise<void>;
}

/**
 * Serves the control API of a started supervisor and records how to reach it in
 * `<state>/service.json`, so `ordivon send/show/list` talk to it. Fails `token_required` for a
 * non-loopback listener without a token, `socket_in_use` when a live process answers on the socket.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { listener } = options;
  const refusal = tokenRefusal(listener, options.token);
  if (refusal) throw refusal;
  // Every local account can reach a TCP port: only a 0600 unix socket goes without a token.
  const token = options.token ?? (listener.kind === 'tcp' ? newSecret() : undefined);
  const sessions = listener.kind === 'tcp' ? new Sessions(`ordivon_session_${process.pid}`) : undefined;
  const api = createControlApi({
    supervisor: options.supervisor,
    access: { listener, ...(token ? { token } : {}), ...(sessions ? { sessions } : {}) },
    ...(options.log ? { log: options.log } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const server = createServer((req, res) => api.handle(req, res));
  let bound: Listener = listener;
  if (listener.kind === 'socket') {
    await clearStaleSocket(listener.path);
    // The socket file is created with mode 0600 from the start (umask), not chmod-ed after a window.
    const umask = process.umask(0o177);
    try {
      await listen(server, () => server.listen(listener.path));
    } finally {
      process.umask(umask);
    }
    chmodSync(listener.path, 0o600);
  } else {
    await listen(server, () => server.listen(listener.port, listener.host));
    const address = server.address();
    if (address && typeof address === 'object') bound = { kind: 'tcp', host: listener.host, port: address.port };
  }
  const url =
    bound.kind === 'socket'
      ? 'http://localhost'
      : `http://${bound.host.includes(':') ? `[${bound.host}]` : bound.host}:${bound.port}`;
  const removeFile = writeServiceFile(options.supervisor.root, {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    url,
    ...(bound.kind === 'socket' ? { socket: bound.path } : {}),
    tokenRequired: token !== undefined,
    ...(token ? { token } : {}),
  });
  let draining: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  const drain = (drainOptions: { retryAfterSeconds?: number } = {}) => {
    draining ??= (removeFile(), api.drain(drainOptions));
    return draining;
  };
  return {
    server,
    api,
    url,
    listener: bound,
    token,
    loginUrl: () => (sessions ? `${url}/login?token=${sessions.code()}` : null),
    drain,
    close() {
      closing ??= (async () => {
        const drained = drain();
        // A client that never finishes its request must not hold the shutdown forever: after the
        // grace its connection is cut (its transition, if one had started, still commits). Until
        // then the listener answers new requests 503 `draining` rather than refusing connections.
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.drainGraceMs ?? 10_000)));
        await Promise.race([drained, grace]);
        clearTimeout(timer);
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await drained;
        await closed;
      })();
      return closing;
    },
  };
}

function listen(server: Server, start: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve();
    });
    start();
  });
}

/** Removes a socket file nobody answers on (left by a crashed service); refuses one that is live. */
async function clearStaleSocket(path: string): Promise<void> {
  if (!existsSync(path)) return;
  if (!lstatSync(path).isSocket()) throw new ApiError(400, 'socket_in_use', `${path} exists and is not a socket`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => (probe.destroy(), resolve(true)));
    probe.once('error', () => resolve(false));
  });
  if (live) throw new ApiError(400, 'socket_in_use', `a process already listens on ${path}`);
  unlinkSync(path);
}
