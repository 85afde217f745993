import assert from 'node:assert/strict';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));

export interface Ready {
  url: string;
  port?: number;
  socket?: string;
  pid: number;
  state: string;
  recovery?: 'full' | 'checkpoint';
  checkpointEvery?: number | null;
  /** `none`, `config (a, b)` or `scripted (codex, hermes via …)`. */
  harnesses?: string;
  /** The configuration file it read, or null. */
  config?: string | null;
  boot?: unknown;
  /** The one-time login URL for the page (null on a unix socket). */
  login?: string | null;
}

export interface ServeChild {
  child: ChildProcessByStdio<null, Readable, Readable>;
  ready: Ready;
  stderr(): string;
  /** Sends SIGTERM and resolves with the exit code and signal. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `ordivon serve … --json` as a child process (in `options.cwd`, else this one's) and resolves with the one line it prints
 * when it listens; rejects (with its stderr) if it exits first. The child is killed when the
 * test process exits.
 */
export function startServe(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: { cwd?: string } = {},
): Promise<ServeChild> {
  const child = spawn(process.execPath, [CLI, 'serve', '--json', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  void exited.then(() => process.off('exit', kill));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      try {
        const ready = JSON.parse(line).listening as Ready;
        resolve({
          child,
          ready,
          stderr: () => err,
          exited,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      } catch (error) {
        reject(new Error(`serve printed ${line}: ${(error as Error).message}\n${err}`));
      }
    });
    void exited.then((r) => reject(new Error(`serve exited ${r.code ?? r.signal} before listening: ${err}`)));
  });
}

export interface HttpAnswer {
  status: number;
  body: any;
  text: string;
}

/** Where a test reaches a service: a serve child's ready line (`state`) or an in-process service (`token`). */
export interface Target {
  url: string;
  socket?: string;
  state?: string;
  token?: string | undefined;
}

/**
 * The bearer token a service requires, as its owner finds it: an in-process service's `token`,
 * else the one its `service.json` names (undefined for a socket without one).
 */
export function tokenOf(target: Target): string | undefined {
  if (target.token !== undefined) return target.token;
  if (target.state === undefined) return undefined;
  try {
    return (JSON.parse(readFileSync(join(target.state, 'service.json'), 'utf8')) as { token?: string }).token;
  } catch {
    return undefined;
  }
}

/** The Authorization header the service's owner sends, unless the request gives its own (or `token: false`). */
function authorization(target: Target, headers: Record<string, string> | undefined, token: boolean | undefined) {
  if (token === false || (headers && Object.keys(headers).some((h) => h.toLowerCase() === 'authorization'))) return {};
  const found = tokenOf(target);
  return found ? { authorization: `Bearer ${found}` } : {};
}

/**
 * One HTTP request to the service over TCP or its unix socket, carrying the token the service's
 * owner reads (`tokenOf`) unless `headers` has an Authorization or `token` is false. `body` is
 * sent as given when a string.
 */
export function http(
  target: Target,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; token?: boolean } = {},
): Promise<HttpAnswer & { headers: Record<string, string | string[] | undefined> }> {
  const url = new URL(path, target.url);
  const payload =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string'
        ? options.body
        : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method,
        agent: false,
        ...(target.socket ? { socketPath: target.socket } : { hostname: url.hostname, port: url.port }),
        path: `${url.pathname}${url.search}`,
        headers: {
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
          ...authorization(target, options.headers, options.token),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body, text, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Digest of every Task's events as the service reports them: "nothing was written" when unchanged. */
export async function eventsDigest(target: Target, headers: Record<string, string> = {}): Promise<string> {
  const list = await http(target, 'GET', '/tasks', { headers });
  const parts: unknown[] = [];
  for (const t of list.body as Array<{ taskId: string }>)
    parts.push((await http(target, 'GET', `/tasks/${t.taskId}/events`, { headers })).body);
  return createHash('sha256')
    .update(JSON.stringify([list.body, parts]))
    .digest('hex');
}

/** Opens the SSE stream and resolves with the first `commit` whose data satisfies `match`. */
export function nextCommit(
  target: Target,
  match: (c: any) => boolean,
  query = '',
): Promise<{ opened: Promise<void>; commit: Promise<any>; close(): void }> {
  const url = new URL(`/events${query}`, target.url);
  return new Promise((resolveOuter, rejectOuter) => {
    let resolveCommit!: (c: any) => void;
    const commit = new Promise<any>((r) => (resolveCommit = r));
    let resolveOpened!: () => void;
    const opened = new Promise<void>((r) => (resolveOpened = r));
    const req = request(
      {
        method: 'GET',
        agent: false,
        ...(target.socket ? { socketPath: target.socket } : { hostname: url.hostname, port: url.port }),
        path: `${url.pathname}${url.search}`,
        headers: authorization(target, undefined, undefined),
      },
      (res) => {
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          if (buffer.includes(': connected')) resolveOpened();
          let at: number;
          while ((at = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            const data = frame.split('\n').find((l) => l.startsWith('data: '));
            if (frame.includes('event: commit') && data) {
              const parsed = JSON.parse(data.slice(6));
              if (match(parsed)) resolveCommit(parsed);
            }
          }
        });
      },
    );
    req.on('error', rejectOuter);
    req.end();
    resolveOuter({ opened, commit, close: () => req.destroy() });
  });
}

/**
 * Commits the Task's Assignment of `stage` to `harness` through the API and resolves once the
 * Host has observed its run (a `run.observe` of the Task on the event stream).
 */
export async function commitAndObserve(target: Target, taskId: string, harness: string, stage: string): Promise<void> {
  const observed = await nextCommit(target, (c) => c.taskId === taskId && c.type === 'run.observe');
  try {
    await observed.opened;
    const sent = await http(target, 'POST', `/tasks/${taskId}/events`, {
      body: { type: 'assignment.commit', harness, stage },
    });
    assert.equal(sent.status, 200, sent.text);
    await observed.commit;
  } finally {
    observed.close();
  }
}
