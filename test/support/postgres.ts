import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import pg from 'pg';
import { findExecutable, optionalPart, type OptionalPart } from './optional-part.js';

/** The superuser initdb makes (trust auth, no password) and the database startPostgres creates. */
const USER = 'ordivon';
const HOST = '127.0.0.1';

/**
 * fsync stays on: the store's durability is what the tests check. max_connections leaves room for
 * pools of several test files sharing a server; shared_buffers is kept small, as several servers
 * may run at once on a 2-core, shared machine.
 */
const DEFAULT_SETTINGS: Record<string, string | number> = {
  fsync: 'on',
  max_connections: 200,
  shared_buffers: '32MB',
};

/** A directory under /usr/lib/postgresql/<version>/bin (Debian's layout; highest version first), else `pg_config --bindir`. */
export function findPostgresBinDir(): string | undefined {
  const hasServer = (dir: string) =>
    findExecutable([join(dir, 'initdb')]) !== undefined && findExecutable([join(dir, 'postgres')]) !== undefined;
  let versions: string[] = [];
  try {
    versions = readdirSync('/usr/lib/postgresql').filter((name) => /^\d+(\.\d+)?$/.test(name));
  } catch {
    // not Debian's layout
  }
  versions.sort((a, b) => Number(b) - Number(a));
  const debian = versions.map((v) => join('/usr/lib/postgresql', v, 'bin')).find(hasServer);
  if (debian) return debian;
  const pgConfig = findExecutable(['pg_config']);
  if (!pgConfig) return undefined;
  const answer = spawnSync(pgConfig, ['--bindir'], { encoding: 'utf8' });
  const dir = answer.status === 0 ? answer.stdout.trim() : '';
  return dir && hasServer(dir) ? dir : undefined;
}

/** The `postgres` account's uid and gid, if there is one. */
function postgresAccount(): { uid: number; gid: number } | undefined {
  const answer = spawnSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' });
  const fields = answer.status === 0 ? answer.stdout.trim().split(':') : [];
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  return fields.length >= 4 && Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
}

const asRoot = () => process.getuid?.() === 0;

let part: OptionalPart | undefined;

/**
 * PostgreSQL's server binaries as an optional part (see optional-part.ts): skipped with the reason
 * on a developer's machine without them, failing under CI=true. As root (the machine and CI run as
 * root) the server runs as the `postgres` account, as PostgreSQL refuses root; the part is missing
 * when there is none. Its path is the binaries' directory.
 */
export function postgresPart(): OptionalPart {
  if (part) return part;
  const bin = findPostgresBinDir();
  if (bin !== undefined && asRoot() && postgresAccount() === undefined) {
    part = optionalPart(
      'a `postgres` account to run PostgreSQL as (it refuses to run as root)',
      undefined,
      'apt-get install postgresql creates one (.ci/run does)',
    );
  } else {
    part = optionalPart(
      'PostgreSQL (initdb and postgres)',
      bin,
      'looked in /usr/lib/postgresql/*/bin and in `pg_config --bindir`; apt-get install postgresql (.ci/run does)',
    );
  }
  return part;
}

export interface PostgresServer {
  /** `postgres://ordivon@127.0.0.1:<port>/ordivon`: the superuser, trust auth, the database made at start. */
  url: string;
  host: string;
  port: number;
  /** The postmaster's pid (its backends, one per connection, are its children). */
  pid: number;
  /** The temp directory: data/ (the cluster) and the Unix socket; removed by stop(). */
  dir: string;
  /** Fast shutdown (SIGINT: clients cut, a shutdown checkpoint), SIGQUIT then SIGKILL if it lingers; then the directory is removed. */
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** Server settings passed as `-c name=value`, over the defaults (fsync=on, max_connections=200, shared_buffers=32MB). */
  settings?: Record<string, string | number>;
  /** How long the new server may take to accept connections; 120 s unless told. */
  timeoutMs?: number;
}

/** Servers started by this process and not stopped yet: stopped (SIGQUIT) and removed if the process exits first. */
const running = new Map<string, ChildProcess | undefined>();
process.on('exit', () => {
  for (const [dir, child] of running) {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
});

/**
 * A real PostgreSQL server of its own: a fresh cluster in a temp directory (initdb, superuser
 * `ordivon`, trust auth, UTF8), `postgres` run as a child process of this one (as the `postgres`
 * account when this process is root), listening on 127.0.0.1 at a free port, with a database
 * `ordivon` made. Test files may share one and isolate with createDatabase().
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bin = postgresPart().need();
  const owner = asRoot() ? postgresAccount() : undefined;
  const settings = { ...DEFAULT_SETTINGS, ...options.settings };
  const dir = mkdtempSync(join(tmpdir(), 'ordivon-pg-'));
  running.set(dir, undefined);
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PG')));
  const spawnAs: SpawnAs = { cwd: dir, env, ...owner };
  let child: ChildProcess | undefined;
  try {
    if (owner) chownSync(dir, owner.uid, owner.gid);
    // --no-sync: initdb's own files are not flushed (a fresh test cluster); the server then runs with fsync on.
    await run(
      join(bin, 'initdb'),
      ['-D', join(dir, 'data'), '-U', USER, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      spawnAs,
    );
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    // The free port is only free when asked: another process may take it before postgres binds it, so
    // a start that fails to bind is tried again on another port.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const log: string[] = [];
      child = spawn(
        join(bin, 'postgres'),
        [
          '-D',
          join(dir, 'data'),
          '-k',
          dir,
          '-p',
          String(port),
          '-c',
          `listen_addresses=${HOST}`,
          ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
        ],
        { ...spawnAs, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      running.set(dir, child);
      keepTail(child, log);
      const adminUrl = `postgres://${USER}@${HOST}:${port}/postgres`;
      try {
        await untilAccepting(child, adminUrl, deadline, log);
      } catch (err) {
        const exited = child.exitCode !== null || child.signalCode !== null;
        if (exited && attempt < 3 && /could not bind|address already in use/i.test(log.join(''))) continue;
        throw err;
      }
      const url = await createDatabase(adminUrl, USER);
      const server = child;
      let stopping: Promise<void> | undefined;
      return {
        url,
        host: HOST,
        port,
        pid: server.pid!,
        dir,
        stop: () => (stopping ??= stopServer(server).finally(() => remove(dir))),
      };
    }
  } catch (err) {
    if (child) await stopServer(child);
    remove(dir);
    throw err;
  }
}

/** A new, empty database on the server at `url` (any of its databases); its url. */
export async function createDatabase(url: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  const made = new URL(url);
  made.pathname = `/${encodeURIComponent(name)}`;
  return made.toString();
}

/** Runs one statement on its own connection to `url` (a test moving leases or heartbeats by hand, or reading rows). */
export async function sql(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

function remove(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  running.delete(dir);
}

interface SpawnAs {
  cwd: string;
  env: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
}

function run(file: string, args: string[], options: SpawnAs): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...options, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      else resolve();
    });
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, HOST);
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no TCP port was given');
  return address.port;
}

/** The server's output, the last 64 KiB, for the error when it does not start. */
function keepTail(child: ChildProcess, log: string[]): void {
  let size = 0;
  const keep = (chunk: Buffer) => {
    log.push(chunk.toString('utf8'));
    size += chunk.length;
    while (size > 65_536 && log.length > 1) size -= Buffer.byteLength(log.shift() ?? '');
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
}

/** Resolves once a client can connect at `url`; retries with a small backoff until the deadline, failing at once if the server exits. */
async function untilAccepting(child: ChildProcess, url: string, deadline: number, log: string[]): Promise<void> {
  const exited = once(child, 'exit').then(([code, signal]) => {
    throw new Error(`postgres exited (${signal ?? code}) before accepting connections:\n${log.join('')}`);
  });
  exited.catch(() => {}); // read below through Promise.race
  let lastError: unknown;
  for (let delay = 10; Date.now() < deadline; delay = Math.min(delay * 2, 250)) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
    client.on('error', () => {});
    try {
      await Promise.race([client.connect(), exited]);
      await client.end();
      return;
    } catch (err) {
      // pg has closed the failed connection itself (end() on it would wait for an 'end' already past).
      lastError = err;
      if (child.exitCode !== null || child.signalCode !== null) await exited;
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, delay))), exited]).finally(() =>
      clearTimeout(timer),
    );
  }
  throw new Error(`postgres did not accept connections in time (last: ${String(lastError)}):\n${log.join('')}`);
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  const within = async (ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const ok = await Promise.race([exited.then(() => true), timeout]);
    clearTimeout(timer);
    return ok;
  };
  for (const [signal, ms] of [
    ['SIGINT', 30_000],
    ['SIGQUIT', 10_000],
  ] as const) {
    child.kill(signal);
    if (await within(ms)) return;
  }
  child.kill('SIGKILL');
  await exited;
}

/**
 * For a `describe` whose tests need a server: starts one before them (failing under CI=true when
 * PostgreSQL is missing) and stops it after; returns the accessor the tests read it with.
 */
export function sharedPostgres(): () => PostgresServer {
  let server: PostgresServer | undefined;
  before(async () => {
    postgresPart().need();
    server = await startPostgres();
  });
  after(async () => server?.stop());
  return () => server!;
}
