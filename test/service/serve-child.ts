import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../scripts/ordivon.js', import.meta.url));

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

/** One HTTP request to the service over TCP or its unix socket. `body` is sent as given when a string. */
export function http(
  target: { url: string; socket?: string },
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
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
        headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
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
          resolve({ status: res.statusCode ?? 0, body, text });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Digest of every Task's events as the service reports them: "nothing was written" when unchanged. */
export async function eventsDigest(
  target: { url: string; socket?: string },
  headers: Record<string, string> = {},
): Promise<string> {
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
  target: { url: string; socket?: string },
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
