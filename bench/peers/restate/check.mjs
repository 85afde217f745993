// Standalone check of the Restate driver (driver.mjs), outside the bench:
//   npx tsc -p .   (builds dist/bench/peers/model-stub.js), then
//   node bench/peers/restate/check.mjs [--idle-wait <s>] [--only run,kill,both,server,idle] [--keep]
// It copies bench/peers/restate and bench/peers/shared to .peers/restate/run/ (as the bench
// does), starts the stub model, and runs the scenarios:
//   run:    4 Tasks x 5 steps, then 1 Task x 20 steps (per-step ms from the stub's arrival times);
//   kill:   2 Tasks x 30 steps, SIGKILL the executor after ~10 stub calls, `resume`, repeats;
//   both:   2 Tasks x 20 steps, SIGKILL executor and server, `resume` (starts the server again);
//   server: 1 Task x 5 steps, step 3 held (tool sleeps 2 s); SIGKILL restate-server once
//           tools.log has its line, `restart-server`, then count tools.log lines;
//   idle:   50 Tasks waiting on awakeables; RSS of executor and server; invocation statuses.
// Every process listens on 127.0.0.1; everything started here is stopped at the end.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, createWriteStream, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
let root = here;
while (!existsSync(join(root, 'dist/bench/peers/model-stub.js'))) {
  if (dirname(root) === root) throw new Error('dist/bench/peers/model-stub.js not found: run `npx tsc -p .` first');
  root = dirname(root);
}
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const idleWaitS = Number(arg('--idle-wait') ?? 0);
const only = arg('--only')?.split(',');
const want = (s) => !only || only.includes(s);

const runDir = join(root, '.peers/restate/run');
execFileSync('mkdir', ['-p', runDir]);
execFileSync('cp', ['-r', join(root, 'bench/peers/restate'), join(root, 'bench/peers/shared'), runDir]);
const driverPath = join(runDir, 'restate/driver.mjs');

const { startModelStub } = await import(join(root, 'dist/bench/peers/model-stub.js'));
const stub = await startModelStub({ payloadBytes: 4096 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const started = new Set(); // pids to clean up
const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};

async function freePorts(n) {
  const servers = [];
  for (let i = 0; i < n; i++) {
    const s = net.createServer();
    await new Promise((r) => s.listen(0, '127.0.0.1', r));
    servers.push(s);
  }
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\S+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

class Driver {
  constructor(config, logFile) {
    this.lines = [];
    this.waiters = [];
    this.proc = spawn('node', [driverPath, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
    started.add(this.proc.pid);
    const log = createWriteStream(logFile, { flags: 'a' });
    this.proc.stderr.pipe(log);
    let buf = '';
    this.proc.stdout.setEncoding('utf8');
    this.proc.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const text = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let line;
        try {
          line = JSON.parse(text);
        } catch {
          line = { t: 'NOT-JSON', text };
        }
        line.at = performance.now();
        this.lines.push(line);
        if (line.t === 'error' || line.t === 'NOT-JSON') console.log('driver said:', JSON.stringify(line));
        this.poke();
      }
    });
    this.exit = new Promise((r) =>
      this.proc.on('exit', (code, signal) => {
        this.exited = { code, signal };
        this.poke();
        r(this.exited);
      }),
    );
  }
  poke() {
    for (const w of [...this.waiters]) w();
  }
  /** Resolves with the first line of type `t` (after `from` lines). */
  waitLine(t, timeoutMs = 120_000, from = 0) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`timeout waiting for ${t}`)), timeoutMs);
      const done = (err, line) => {
        clearTimeout(timer);
        this.waiters.splice(this.waiters.indexOf(tryIt), 1);
        err ? reject(err) : resolve(line);
      };
      const tryIt = () => {
        const line = this.lines.slice(from).find((l) => l.t === t);
        if (line) return done(undefined, line);
        const bad = this.lines.slice(from).find((l) => l.t === 'error');
        if (bad) return done(new Error(`driver error: ${bad.message}`));
        if (this.exited) return done(new Error(`driver exited ${JSON.stringify(this.exited)} before ${t}`));
      };
      this.waiters.push(tryIt);
      tryIt();
    });
  }
  async stop() {
    this.proc.stdin.end();
    return this.exit;
  }
}

async function waitFor(pred, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timeout: ${what}`);
    await sleep(20);
  }
}

function listeners(pid) {
  try {
    return execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(`pid=${pid},`))
      .map((l) => l.trim().split(/\s+/)[3]);
  } catch {
    return ['(ss failed)'];
  }
}

function config(mode, dir, tasks, steps, ports, concurrency = tasks.length) {
  return { mode, dir, modelUrl: stub.url, tasks, steps, concurrency, ports };
}

function callsOf(task) {
  return stub.calls.filter((c) => c.task === task);
}

function perStepMs(tasks) {
  const per = tasks.map((t) => {
    const c = callsOf(t);
    return (c.at(-1).at - c[0].at) / (c.length - 1);
  });
  return per.reduce((a, b) => a + b, 0) / per.length;
}

function allSteps(tasks, steps) {
  return tasks.every((t) => {
    for (let s = 1; s <= steps; s++) if (stub.count(t, s) < 1) return false;
    return true;
  });
}

const base = mkdtempSync(join(tmpdir(), 'restate-check-'));
console.log(`dirs under ${base}; driver stderr in each scenario's driver.log`);

async function scenario(name, fn) {
  if (!want(name)) return;
  const dir = join(base, name);
  execFileSync('mkdir', ['-p', dir]);
  console.log(`--- ${name}`);
  try {
    await fn(dir, join(dir, 'driver.log'));
  } catch (e) {
    check(false, `${name}: ${e.message}`);
  }
}

await scenario('run', async (dir, logFile) => {
  const ports = await freePorts(5);
  const tasks = ['r1', 'r2', 'r3', 'r4'];
  const t0 = performance.now();
  const d = new Driver(config('run', dir, tasks, 5, ports), logFile);
  const ready = await d.waitLine('ready');
  console.log(`ready after ${Math.round(ready.at - t0)} ms: ${JSON.stringify(ready.pids)}; ${ready.version}`);
  console.log(
    `server listens on ${listeners(ready.pids.server).join(' ')}; executor on ${listeners(ready.pids.executor).join(' ')}`,
  );
  const done = await d.waitLine('done');
  check(done.ended === 4, `run: done ended ${done.ended} (want 4)`);
  check(allSteps(tasks, 5), 'run: stub saw steps 1..5 of every Task');
  check(stub.repeatedCalls() === 0, `run: repeated calls ${stub.repeatedCalls()} (want 0)`);
  console.log(
    `4 Tasks x 5 steps (concurrent): ${Math.round(done.at - ready.at)} ms ready->done, ~${perStepMs(tasks).toFixed(1)} ms per step per Task`,
  );
  // One Task alone, 20 steps: the sequential per-step cost.
  const d2dir = join(dir, 'seq');
  execFileSync('mkdir', ['-p', d2dir]);
  const serverPid = ready.pids.server;
  const ex = await d.stop();
  check(ex.code === 0, `run: driver exit ${JSON.stringify(ex)}`);
  check(!alive(serverPid), `run: restate-server ${serverPid} stopped after stdin closed`);
  const d2 = new Driver(config('run', d2dir, ['seq1'], 20, ports), logFile);
  const r2 = await d2.waitLine('ready');
  const done2 = await d2.waitLine('done');
  check(done2.ended === 1 && allSteps(['seq1'], 20), 'run: 1 Task x 20 steps ended with every step');
  console.log(
    `1 Task x 20 steps: ${Math.round(done2.at - r2.at)} ms ready->done, ~${perStepMs(['seq1']).toFixed(1)} ms per step`,
  );
  await d2.stop();
  check(!alive(r2.pids.server), 'run: second restate-server stopped');
  // concurrency 2 over 6 Tasks: at most 2 Tasks between their first and last model call at once.
  const d3dir = join(dir, 'window');
  execFileSync('mkdir', ['-p', d3dir]);
  const wtasks = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
  const d3 = new Driver(config('run', d3dir, wtasks, 4, ports, 2), logFile);
  const r3 = await d3.waitLine('ready');
  const done3 = await d3.waitLine('done');
  const spans = wtasks.map((t) => [callsOf(t)[0].at, callsOf(t).at(-1).at]);
  const overlap = Math.max(...spans.map(([s]) => spans.filter(([a, b]) => a <= s && s <= b).length));
  check(done3.ended === 6 && allSteps(wtasks, 4), `run: 6 Tasks at concurrency 2 ended (${done3.ended})`);
  check(overlap <= 2, `run: at most 2 Tasks in flight at once (saw ${overlap})`);
  // A SIGTERM of the driver stops the server too.
  d3.proc.kill('SIGTERM');
  await d3.exit;
  check(!alive(r3.pids.server), 'run: SIGTERM of the driver stopped restate-server');
});

await scenario('kill', async (dir, logFile) => {
  const ports = await freePorts(5);
  const tasks = ['k1', 'k2'];
  const repeatedBefore = stub.repeatedCalls();
  const d = new Driver(config('run', dir, tasks, 30, ports), logFile);
  const ready = await d.waitLine('ready');
  const serverPid = ready.pids.server;
  started.add(serverPid);
  const base0 = stub.calls.length;
  await waitFor(() => stub.calls.length - base0 >= 10, 60_000, '10 stub calls');
  d.proc.kill('SIGKILL');
  const killedAt = performance.now();
  await d.exit;
  const seenAtKill = stub.calls.length - base0;
  check(alive(serverPid), `kill: restate-server ${serverPid} survived the executor's SIGKILL`);
  const r = new Driver(config('resume', dir, tasks, 30, ports), logFile);
  const rready = await r.waitLine('ready');
  check(rready.pids.server === serverPid, `kill: resume reports the running server (${rready.pids.server})`);
  const firstAfter = await (async () => {
    await waitFor(() => stub.calls.length - base0 > seenAtKill, 60_000, 'a call after resume');
    return stub.calls[base0 + seenAtKill].at;
  })();
  const done = await r.waitLine('done');
  check(done.ended === 2, `kill: done ended ${done.ended} (want 2)`);
  check(allSteps(tasks, 30), 'kill: stub saw steps 1..30 of both Tasks');
  console.log(
    `kill after ${seenAtKill} calls; resume ready ${Math.round(rready.at - killedAt)} ms after the kill, ` +
      `first model call ${Math.round(firstAfter - killedAt)} ms after; repeatedCalls ${stub.repeatedCalls() - repeatedBefore} ` +
      `(${tasks.map((t) => `${t}: ${callsOf(t).length} calls for 30 steps`).join(', ')})`,
  );
  const ex = await r.stop();
  check(ex.code === 0 && !alive(serverPid), `kill: resume driver exit ${JSON.stringify(ex)}, server stopped`);
});

await scenario('both', async (dir, logFile) => {
  // Executor and server both SIGKILLed: `resume` starts the server again on the same data.
  const ports = await freePorts(5);
  const tasks = ['b1', 'b2'];
  const repeatedBefore = stub.repeatedCalls();
  const d = new Driver(config('run', dir, tasks, 20, ports), logFile);
  const ready = await d.waitLine('ready');
  started.add(ready.pids.server);
  const base0 = stub.calls.length;
  await waitFor(() => stub.calls.length - base0 >= 8, 60_000, '8 stub calls');
  d.proc.kill('SIGKILL');
  process.kill(ready.pids.server, 'SIGKILL');
  await d.exit;
  await waitFor(() => !alive(ready.pids.server), 5_000, 'server gone');
  const r = new Driver(config('resume', dir, tasks, 20, ports), logFile);
  const rready = await r.waitLine('ready');
  started.add(rready.pids.server);
  check(rready.pids.server !== ready.pids.server, `both: resume started a new server (${rready.pids.server})`);
  const done = await r.waitLine('done');
  check(done.ended === 2 && allSteps(tasks, 20), `both: done ended ${done.ended}, every step seen`);
  console.log(`both killed: repeatedCalls ${stub.repeatedCalls() - repeatedBefore}`);
  const ex = await r.stop();
  check(ex.code === 0 && !alive(rready.pids.server), `both: driver exit ${JSON.stringify(ex)}, server stopped`);
});

await scenario('server', async (dir, logFile) => {
  const ports = await freePorts(5);
  const task = 'h1';
  const repeatedBefore = stub.repeatedCalls();
  stub.setHold({ task, step: 3, sleepS: 2 });
  const d = new Driver(config('run', dir, [task], 5, ports), logFile);
  const ready = await d.waitLine('ready');
  const serverPid = ready.pids.server;
  started.add(serverPid);
  const toolsLog = join(dir, 'work', task, 'tools.log');
  const lines = () => (existsSync(toolsLog) ? readFileSync(toolsLog, 'utf8').split('\n').filter(Boolean).length : 0);
  await waitFor(() => lines() >= 1, 60_000, 'tools.log line');
  process.kill(serverPid, 'SIGKILL');
  const killedAt = performance.now();
  await waitFor(() => !alive(serverPid), 5_000, 'server gone');
  const n = d.lines.length;
  d.proc.stdin.write('{"t":"restart-server"}\n');
  const sv = await d.waitLine('server', 60_000, n);
  started.add(sv.pid);
  check(
    sv.pid !== serverPid && alive(sv.pid),
    `server: restarted as ${sv.pid} after ${Math.round(sv.at - killedAt)} ms`,
  );
  const done = await d.waitLine('done');
  check(done.ended === 1 && allSteps([task], 5), 'server: Task ended with every step');
  await sleep(2500); // let a first attempt still sleeping in the executor finish too
  console.log(
    `server kill during held step 3: tools.log has ${lines()} line(s) (2 = the tool ran twice), ` +
      `step-3 model calls ${stub.count(task, 3)}, repeatedCalls ${stub.repeatedCalls() - repeatedBefore}, ` +
      `done ${Math.round(done.at - killedAt)} ms after the kill`,
  );
  stub.setHold(undefined);
  const ex = await d.stop();
  check(ex.code === 0 && !alive(sv.pid), `server: driver exit ${JSON.stringify(ex)}, server stopped`);
});

await scenario('idle', async (dir, logFile) => {
  const ports = await freePorts(5);
  const tasks = Array.from({ length: 50 }, (_, i) => `i${i + 1}`);
  const d = new Driver(config('idle', dir, tasks, 5, ports), logFile);
  const ready = await d.waitLine('ready');
  started.add(ready.pids.server);
  const before = { executor: rssMiB(ready.pids.executor), server: rssMiB(ready.pids.server) };
  const idle = await d.waitLine('idle');
  check(idle.tasks === 50, `idle: ${idle.tasks} waiting (want 50)`);
  const statuses = async () => {
    const res = await fetch(`http://127.0.0.1:${ports[1]}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        query: "SELECT status, COUNT(*) AS n FROM sys_invocation WHERE target_handler_name='idle' GROUP BY status",
      }),
    });
    return JSON.stringify((await res.json()).rows);
  };
  const after = { executor: rssMiB(ready.pids.executor), server: rssMiB(ready.pids.server) };
  console.log(
    `idle 50: ${Math.round(idle.at - ready.at)} ms ready->idle; RSS MiB before ${JSON.stringify(before)}, after ${JSON.stringify(after)}; statuses ${await statuses()}`,
  );
  if (idleWaitS > 0) {
    await sleep(idleWaitS * 1000);
    const later = { executor: rssMiB(ready.pids.executor), server: rssMiB(ready.pids.server) };
    console.log(`idle +${idleWaitS} s: RSS MiB ${JSON.stringify(later)}; statuses ${await statuses()}`);
  }
  const ex = await d.stop();
  check(ex.code === 0 && !alive(ready.pids.server), `idle: driver exit ${JSON.stringify(ex)}, server stopped`);
});

// Cleanup: anything still alive that this script started (drivers and servers), by pid.
for (const pid of started) {
  if (alive(pid)) {
    console.log(`cleanup: SIGKILL ${pid}`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}
await stub.close();
if (!process.argv.includes('--keep')) rmSync(base, { recursive: true, force: true });
console.log(failures.length ? `${failures.length} FAILED` : 'all checks passed');
process.exit(failures.length ? 1 : 0);
