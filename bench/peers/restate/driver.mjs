// The Restate driver of the side-by-side bench (contract: bench/peers/driver-protocol.ts).
// This process IS the executor: a Restate SDK service `bench` (handlers `run` and `idle`) served
// over HTTP/2 on 127.0.0.1. It starts `restate-server` as a detached child (its own process
// group, stdio to `<dir>/restate-server.log`, pid in `<dir>/restate-server.pid`), so that a
// SIGKILL of this process leaves the server running, as in a real deployment. Tasks go in through
// the ingress as one-way sends whose idempotency key is the Task id; the driver attaches to each
// invocation to learn that it ended.
//
// run/resume hold at most `concurrency` Tasks in flight: the driver keeps a window of that many
// send+attach pairs (Restate itself would run every sent invocation at once).
// config.ports, in order: ingress, admin, node (message fabric), pgsql query, the service's own.
// Plain ESM, run from .peers/restate/run/restate/ with bare imports resolved from
// .peers/restate/node_modules.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callModel, isDone, requestMessages, runTools } from '../shared/agent-step.mjs';

// SDK 1.17.2 calls Promise.withResolvers per request; Node 20 lacks it.
if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((a, b) => {
      resolve = a;
      reject = b;
    });
    return { promise, resolve, reject };
  };
}

// stdout carries the protocol only: the SDK's console logger goes to stderr.
const writeLine = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const log = (...args) => console.error('[restate-driver]', ...args);
console.log = (...a) => console.error(...a);
console.info = (...a) => console.error(...a);
console.debug = (...a) => console.error(...a);
// The SDK logs every invocation's start/end at INFO by default; keep warnings and errors.
process.env.RESTATE_LOGGING ??= 'WARN';

const here = dirname(fileURLToPath(import.meta.url));
const PARTITIONS = 2;
const DURABILITY =
  'each ctx.run (model call, then tool call) is acknowledged to the handler only after ' +
  'restate-server has appended its result to the Bifrost log (single node, local log-server on ' +
  `RocksDB with WAL fsync per write batch, the default); ${PARTITIONS} partitions ` +
  `(--default-num-partitions ${PARTITIONS}); server defaults otherwise`;

function fail(message) {
  writeLine({ t: 'error', message });
  return 1;
}

/** Finds `node_modules/<name>` walking up from this file (the peer's install). */
function findPackage(name) {
  for (let d = here; ; d = dirname(d)) {
    const candidate = join(d, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(d) === d) throw new Error(`cannot find ${name} above ${here}`);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// --- HTTP to the server (node:http: no client-side timeouts, attach may take minutes) ---------

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

function request(method, url, { body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: {
          ...(data !== undefined
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }
            : {}),
          accept: 'application/json',
          ...headers,
        },
      },
      (res) => {
        const parts = [];
        res.on('data', (p) => parts.push(p));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}

// --- restate-server -----------------------------------------------------------------------------

function serverProcessAlive(pid) {
  if (!pid) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('restate-server');
  } catch {
    return false;
  }
}

class Server {
  constructor(config) {
    const [ingress, admin, node, pgsql] = config.ports;
    this.dir = config.dir;
    this.ingress = `http://127.0.0.1:${ingress}`;
    this.admin = `http://127.0.0.1:${admin}`;
    this.pidFile = join(config.dir, 'restate-server.pid');
    this.logFile = join(config.dir, 'restate-server.log');
    this.bin = join(findPackage('@restatedev/restate-server-linux-x64'), 'bin', 'restate-server');
    this.env = {
      ...process.env,
      DO_NOT_TRACK: '1',
      RESTATE_LOG_DISABLE_ANSI_CODES: 'true',
      RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
      RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
      RESTATE_ADMIN__QUERY_ENGINE__PGSQL_BIND_ADDRESS: `127.0.0.1:${pgsql}`,
      RESTATE_BIND_ADDRESS: `127.0.0.1:${node}`,
      RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${node}/`,
    };
    this.pid = undefined;
  }

  /** The pid of a restate-server this dir's pid file names, if it still runs. */
  runningPid() {
    try {
      const pid = Number(readFileSync(this.pidFile, 'utf8').trim());
      return serverProcessAlive(pid) ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  async start() {
    const fd = openSync(this.logFile, 'a');
    const args = [
      '--base-dir',
      join(this.dir, 'restate-data'),
      '--node-name',
      'bench',
      '--default-num-partitions',
      String(PARTITIONS),
      '--no-logo',
    ];
    const child = spawn(this.bin, args, { detached: true, stdio: ['ignore', fd, fd], env: this.env });
    closeSync(fd);
    let exited;
    child.on('exit', (code, signal) => {
      exited = `restate-server exited (${code ?? signal}); see ${this.logFile}`;
      log(exited);
    });
    child.on('error', (e) => (exited = `restate-server failed to start: ${e.message}`));
    child.unref();
    if (!child.pid) throw new Error(`restate-server did not start (${this.bin})`);
    this.pid = child.pid;
    writeFileSync(this.pidFile, `${child.pid}\n`);
    await this.waitHealthy(() => exited);
    log(`restate-server ${child.pid} ready`);
    return child.pid;
  }

  /** Starts the server unless this dir's server already runs; resolves with its pid. */
  async ensure() {
    const pid = this.runningPid();
    if (pid) {
      this.pid = pid;
      await this.waitHealthy(() => (serverProcessAlive(pid) ? undefined : `restate-server ${pid} died`));
      log(`restate-server ${pid} already running`);
      return pid;
    }
    return this.start();
  }

  async waitHealthy(failed) {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const why = failed();
      if (why) throw new Error(why);
      try {
        const a = await request('GET', `${this.admin}/health`);
        const i = await request('GET', `${this.ingress}/restate/health`);
        if (a.status === 200 && i.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`restate-server not healthy after 90 s; see ${this.logFile}`);
      await sleep(50);
    }
  }

  async register(serviceUrl) {
    for (let attempt = 0; ; attempt++) {
      const r = await request('POST', `${this.admin}/deployments`, { body: { uri: serviceUrl } });
      if (r.status >= 200 && r.status < 300) return log(`registered ${serviceUrl}: ${r.status}`);
      if (r.status === 409) return log(`deployment ${serviceUrl} already registered`);
      if (attempt >= 50) throw new Error(`registering ${serviceUrl}: ${r.status} ${r.text}`);
      await sleep(100);
    }
  }

  async query(sql) {
    const r = await request('POST', `${this.admin}/query`, { body: { query: sql } });
    if (r.status !== 200) throw new Error(`query ${r.status}: ${r.text}`);
    return JSON.parse(r.text).rows;
  }

  /** SIGTERM, wait (up to 20 s), then SIGKILL. */
  async stop() {
    const pid = this.runningPid() ?? (serverProcessAlive(this.pid) ? this.pid : undefined);
    if (!pid) return;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    const deadline = Date.now() + 20_000;
    while (serverProcessAlive(pid) && Date.now() < deadline) await sleep(50);
    if (serverProcessAlive(pid)) {
      log(`restate-server ${pid} ignored SIGTERM; SIGKILL`);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  }
}

// --- ingress: send, attach ----------------------------------------------------------------------

const transient = (status) => status === 502 || status === 503 || status === 504 || status === 408;

/** Retries on connection errors and 5xx-unavailable (the server may be down for a restart). */
async function retrying(what, fn) {
  let delay = 50;
  for (let attempt = 0; ; attempt++) {
    try {
      const r = await fn();
      if (!transient(r.status)) return r;
      if (attempt % 20 === 0) log(`${what}: ${r.status}, retrying`);
    } catch (e) {
      if (attempt % 20 === 0) log(`${what}: ${e.code ?? e.message}, retrying`);
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 500);
  }
}

async function send(server, handler, taskId, input) {
  const r = await retrying(`send ${taskId}`, () =>
    request('POST', `${server.ingress}/bench/${handler}/send`, { body: input, headers: { 'idempotency-key': taskId } }),
  );
  if (r.status < 200 || r.status >= 300) throw new Error(`send ${taskId}: ${r.status} ${r.text}`);
  const { invocationId, status } = JSON.parse(r.text);
  return { invocationId, status };
}

/** Resolves once the invocation has ended (true: succeeded). */
async function attach(server, taskId, invocationId) {
  const r = await retrying(`attach ${taskId}`, () =>
    request('GET', `${server.ingress}/restate/invocation/${invocationId}/attach`),
  );
  if (r.status >= 200 && r.status < 300) return true;
  log(`task ${taskId} (${invocationId}) ended with ${r.status}: ${r.text}`);
  return false;
}

// --- main ---------------------------------------------------------------------------------------

async function main() {
  let config;
  try {
    config = JSON.parse(process.argv[2] ?? '');
  } catch {
    return fail('usage: node driver.mjs <DriverConfig JSON>');
  }
  if (!['run', 'resume', 'idle'].includes(config.mode)) return fail(`unknown mode ${config.mode}`);
  if (!Array.isArray(config.ports) || config.ports.length < 5)
    return fail('restate needs 5 ports: ingress, admin, node, pgsql, service');
  const { dir, modelUrl, tasks, steps } = config;
  const concurrency = Math.max(1, config.concurrency ?? tasks.length);
  const servicePort = config.ports[4];
  mkdirSync(dir, { recursive: true });

  const restate = await import('@restatedev/restate-sdk');
  const sdkVersion = JSON.parse(
    readFileSync(join(findPackage('@restatedev/restate-sdk'), 'package.json'), 'utf8'),
  ).version;
  const serverVersion = JSON.parse(
    readFileSync(join(findPackage('@restatedev/restate-server-linux-x64'), 'package.json'), 'utf8'),
  ).version;

  const idleWaiting = new Set();
  const bench = restate.service({
    name: 'bench',
    handlers: {
      run: async (ctx, { taskId, steps: k }) => {
        const workdir = join(dir, 'work', taskId);
        const history = [];
        for (let n = 1; ; n++) {
          const answer = await ctx.run(`model-${n}`, () => callModel(modelUrl, requestMessages(taskId, k, history)));
          if (isDone(answer)) return { taskId, steps: n - 1 };
          const output = await ctx.run(`tool-${n}`, () => runTools(workdir, answer));
          history.push({ answer, output });
        }
      },
      idle: async (ctx, { taskId }) => {
        // Waits for an awakeable nobody resolves: Restate holds the invocation (and suspends it).
        const awakeable = ctx.awakeable();
        idleWaiting.add(taskId);
        await awakeable.promise;
      },
    },
  });

  const server = new Server(config);
  let serving;
  const shutdown = async (code) => {
    try {
      await server.stop();
    } catch (e) {
      log(`stopping restate-server: ${e.message}`);
    }
    serving?.close();
    process.exit(code);
  };

  try {
    // The service first, so the server finds it when it (re)connects in-flight invocations.
    serving = http2.createServer(restate.createEndpointHandler({ services: [bench] }));
    await new Promise((resolve, reject) => {
      serving.once('error', reject);
      serving.listen(servicePort, '127.0.0.1', resolve);
    });
    const serverPid = await server.ensure();
    await server.register(`http://127.0.0.1:${servicePort}`);
    writeLine({
      t: 'ready',
      pids: { executor: process.pid, server: serverPid },
      version: `restate-server ${serverVersion}, restate-sdk ${sdkVersion}`,
      durability: DURABILITY,
    });
  } catch (e) {
    writeLine({ t: 'error', message: e.stack ?? String(e) });
    await shutdown(1);
    return;
  }

  // A SIGTERM/SIGINT of the driver is a normal stop too: never leave the server behind.
  process.once('SIGTERM', () => shutdown(143));
  process.once('SIGINT', () => shutdown(130));

  // stdin: restart-server lines; its end stops everything.
  let commands = Promise.resolve();
  let buffered = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!line) continue;
      commands = commands.then(async () => {
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          return log(`ignored stdin line ${line}`);
        }
        if (message.t !== 'restart-server') return log(`ignored stdin line ${line}`);
        try {
          // The bench has SIGKILLed it; wait until the old one is gone before reusing its ports.
          const old = server.runningPid();
          const deadline = Date.now() + 10_000;
          while (old && serverProcessAlive(old) && Date.now() < deadline) await sleep(20);
          const pid = server.runningPid() ?? (await server.start());
          writeLine({ t: 'server', pid });
        } catch (e) {
          writeLine({ t: 'error', message: `restart-server: ${e.message}` });
          await shutdown(1);
        }
      });
    }
  });
  process.stdin.on('end', () => {
    commands.then(() => shutdown(0));
  });

  try {
    if (config.mode === 'idle') {
      const ids = [];
      for (const taskId of tasks) ids.push((await send(server, 'idle', taskId, { taskId })).invocationId);
      // All wait once each handler has reached its await and the server holds every one of them
      // as running (awaiting) or suspended. With the server's default invoker inactivity-timeout
      // (1 min) they stay `running` (stream open to this process) for a minute, then the server
      // suspends them (`suspended`, nothing held here); `idle` is printed at the first point.
      for (;;) {
        if (idleWaiting.size >= tasks.length) {
          const rows = await server.query(
            "SELECT status, COUNT(*) AS n FROM sys_invocation WHERE target_handler_name = 'idle' GROUP BY status",
          );
          const by = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
          const waiting = (by.suspended ?? 0) + (by.running ?? 0);
          if (waiting >= tasks.length) {
            log(`idle invocations by status: ${JSON.stringify(by)}`);
            break;
          }
        }
        await sleep(100);
      }
      writeLine({ t: 'idle', tasks: tasks.length });
      return;
    }
    // run / resume: a window of `concurrency` Tasks, each sent (idempotency key = Task id; a
    // Task sent before a kill answers PreviouslyAccepted) and attached to until it ends.
    let next = 0;
    let ended = 0;
    const worker = async () => {
      while (next < tasks.length) {
        const taskId = tasks[next++];
        const { invocationId, status } = await send(server, 'run', taskId, { taskId, steps });
        if (config.mode === 'resume') log(`task ${taskId}: ${status} ${invocationId}`);
        await attach(server, taskId, invocationId);
        ended++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
    writeLine({ t: 'done', ended });
  } catch (e) {
    writeLine({ t: 'error', message: e.stack ?? String(e) });
    await shutdown(1);
  }
}

const code = await main();
if (code) process.exit(code);
