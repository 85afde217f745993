// Standalone check of the LangGraph peer driver (driver.mjs) against the bench's stub model.
// Build first (`npx tsc -p .` at the repo root), then: `node bench/peers/langgraph/check.mjs`.
// It copies bench/peers/langgraph and bench/peers/shared to .peers/langgraph/run/ as the bench
// does, runs the driver from there, and prints its findings to stdout (one line each).
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
let root = here;
while (!existsSync(join(root, 'dist/bench/peers/model-stub.js'))) {
  const up = dirname(root);
  if (up === root)
    throw new Error('dist/bench/peers/model-stub.js not found above this file: run `npx tsc -p .` first');
  root = up;
}
const { startModelStub } = await import(pathToFileURL(join(root, 'dist/bench/peers/model-stub.js')).href);
const { DriverConfig, DriverLine } = await import(
  pathToFileURL(join(root, 'dist/bench/peers/driver-protocol.js')).href
);
const Database = createRequire(join(root, '.peers/langgraph/package.json'))('better-sqlite3');

// Copy as the bench does.
const runDir = join(root, '.peers/langgraph/run');
mkdirSync(runDir, { recursive: true });
cpSync(join(root, 'bench/peers/langgraph'), join(runDir, 'langgraph'), { recursive: true });
cpSync(join(root, 'bench/peers/shared'), join(runDir, 'shared'), { recursive: true });
const driverPath = join(runDir, 'langgraph/driver.mjs');

const base = mkdtempSync(join(tmpdir(), 'lg-check-'));
const stub = await startModelStub({ payloadBytes: 4096 });
const children = new Set();
let problems = 0;
const report = (line) => console.log(line);
const problem = (line) => {
  problems++;
  console.log(`PROBLEM: ${line}`);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const SETTINGS = {
  'sync+FULL': { durability: 'sync', syncFull: true },
  'async default': {},
};

function startDriver(config) {
  const full = DriverConfig.parse({ ports: [], concurrency: 1, modelUrl: stub.url, ...config });
  const child = spawn(process.execPath, [driverPath, JSON.stringify(full)], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  const lines = [];
  const waiters = [];
  let buf = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const raw = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let line;
      try {
        line = DriverLine.parse(JSON.parse(raw));
      } catch (e) {
        problem(`protocol error on stdout: ${raw.slice(0, 200)} (${e.message.slice(0, 200)})`);
        continue;
      }
      if (line.t === 'error') problem(`driver error: ${line.message.slice(0, 500)}`);
      lines.push(line);
      for (const w of [...waiters])
        if (w.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
    }
  });
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  const waitFor = (t, timeoutMs = 120_000) => {
    const found = lines.find((l) => l.t === t || l.t === 'error');
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timeout waiting for ${t}; stderr: ${stderr.slice(-1000)}`)),
        timeoutMs,
      );
      const w = {
        test: (l) => l.t === t || l.t === 'error',
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
      };
      waiters.push(w);
      exited.then(() => {
        if (waiters.includes(w)) {
          clearTimeout(timer);
          reject(new Error(`driver exited waiting for ${t}; stderr: ${stderr.slice(-1000)}`));
        }
      });
    });
  };
  const stop = async () => {
    child.stdin.end();
    const r = await exited;
    if (r.code !== 0) problem(`driver exit ${r.code} ${r.signal}; stderr: ${stderr.slice(-500)}`);
  };
  const kill = async () => {
    child.kill('SIGKILL');
    await exited;
  };
  return { child, waitFor, stop, kill, exited, stderr: () => stderr };
}

const rss = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
};

function checkCalls(tasks, steps, label) {
  for (const task of tasks) {
    for (let s = 1; s <= steps; s++) {
      const n = stub.count(task, s);
      if (n < 1) problem(`${label}: ${task} step ${s} never called`);
    }
    const beyond = stub.calls.filter((c) => c.task === task && (c.step < 1 || c.step > steps));
    if (beyond.length) problem(`${label}: ${task} has calls outside 1..${steps}`);
  }
}
const repeatsOf = (tasks) =>
  tasks.reduce((sum, task) => {
    const steps = new Set(stub.calls.filter((c) => c.task === task).map((c) => c.step));
    return sum + stub.calls.filter((c) => c.task === task).length - steps.size;
  }, 0);

function dbFacts(dir) {
  const file = join(dir, 'checkpoints.sqlite');
  const bytes = [file, `${file}-wal`].reduce((s, f) => s + (existsSync(f) ? statSync(f).size : 0), 0);
  const db = new Database(file, { readonly: true });
  const row = db
    .prepare(
      'SELECT count(*) AS n, max(length(checkpoint)) AS maxCk, avg(length(checkpoint)) AS avgCk FROM checkpoints',
    )
    .get();
  const w = db.prepare('SELECT count(*) AS n, sum(length(value)) AS bytes FROM writes').get();
  db.close();
  return `db files ${(bytes / 1024).toFixed(0)} KiB, ${row.n} checkpoints (max ${row.maxCk} B, avg ${Math.round(row.avgCk)} B), ${w.n} writes (${w.bytes} B)`;
}

let seq = 0;
const newDir = (name) => {
  const d = join(base, `${++seq}-${name.replace(/[^a-z0-9]+/gi, '_')}`);
  mkdirSync(d, { recursive: true });
  return d;
};

try {
  // 1. run: 4 tasks × 5 steps, each setting.
  for (const [label, setting] of Object.entries(SETTINGS)) {
    const dir = newDir(`run ${label}`);
    const tasks = [1, 2, 3, 4].map((i) => `run${seq}-${i}`);
    const d = startDriver({ mode: 'run', dir, tasks, steps: 5, concurrency: 4, ...setting });
    const ready = await d.waitFor('ready');
    const done = await d.waitFor('done');
    checkCalls(tasks, 5, `run ${label}`);
    for (const task of tasks)
      for (let s = 1; s <= 5; s++)
        if (!existsSync(join(dir, 'work', task, `steps/${String(s).padStart(6, '0')}.json`)))
          problem(`run ${label}: ${task} step file ${s} missing`);
    const repeats = repeatsOf(tasks);
    report(
      `run ${label}: ready.durability="${ready.durability}"; done.ended=${done.ended} (want 4); repeated calls ${repeats}; ${dbFacts(dir)}`,
    );
    if (done.ended !== 4) problem(`run ${label}: ended ${done.ended}`);
    await d.stop();
  }

  // 2. kill midway and resume: 2 tasks × 30 steps, each setting.
  for (const [label, setting] of Object.entries(SETTINGS)) {
    const dir = newDir(`kill ${label}`);
    const tasks = [1, 2].map((i) => `kill${seq}-${i}`);
    const before = stub.repeatedCalls();
    const d = startDriver({ mode: 'run', dir, tasks, steps: 30, concurrency: 2, ...setting });
    await d.waitFor('ready');
    const ofTasks = () => stub.calls.filter((c) => tasks.includes(c.task)).length;
    while (ofTasks() < 10) await sleep(1);
    await d.kill();
    const atKill = ofTasks();
    const r = startDriver({ mode: 'resume', dir, tasks, steps: 30, concurrency: 2, ...setting });
    await r.waitFor('ready');
    const done = await r.waitFor('done');
    checkCalls(tasks, 30, `kill ${label}`);
    report(
      `kill+resume ${label}: SIGKILL after ${atKill} calls; resume done.ended=${done.ended} (want 2); stub.repeatedCalls() ${before} -> ${stub.repeatedCalls()} (+${stub.repeatedCalls() - before}); resume log: ${(r.stderr().match(/resume: .*/) ?? [''])[0]}`,
    );
    if (done.ended !== 2) problem(`kill ${label}: ended ${done.ended}`);
    await r.stop();
  }

  // 3. kill inside a held tool step (step 3 sleeps 2 s after appending its line to tools.log).
  for (const [label, setting] of Object.entries(SETTINGS)) {
    const dir = newDir(`hold ${label}`);
    const task = `hold${seq}`;
    stub.setHold({ task, step: 3, sleepS: 2 });
    const log = join(dir, 'work', task, 'tools.log');
    const d = startDriver({ mode: 'run', dir, tasks: [task], steps: 5, concurrency: 1, ...setting });
    await d.waitFor('ready');
    const t0 = Date.now();
    while (!(existsSync(log) && readFileSync(log, 'utf8').includes('\n'))) {
      if (Date.now() - t0 > 30_000) throw new Error('tools.log never written');
      await sleep(5);
    }
    await d.kill();
    const r = startDriver({ mode: 'resume', dir, tasks: [task], steps: 5, concurrency: 1, ...setting });
    await r.waitFor('ready');
    const done = await r.waitFor('done');
    stub.setHold(undefined);
    const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
    checkCalls([task], 5, `hold ${label}`);
    report(
      `hold ${label}: tools.log lines ${lines} (2 = the killed tool step ran again); model calls for step 3: ${stub.count(task, 3)}; done.ended=${done.ended}`,
    );
    await r.stop();
  }

  // 4. idle: 50 tasks waiting on interrupt().
  {
    const dir = newDir('idle');
    const tasks = Array.from({ length: 50 }, (_, i) => `idle-${i}`);
    const d = startDriver({ mode: 'idle', dir, tasks, steps: 5, concurrency: 50, durability: 'sync', syncFull: true });
    const ready = await d.waitFor('ready');
    const rssReady = rss(ready.pids.executor); // at once: the tasks start right after `ready`
    const idle = await d.waitFor('idle');
    await sleep(1000);
    const rssIdle = rss(ready.pids.executor);
    const calls = stub.calls.filter((c) => c.task.startsWith('idle-')).length;
    report(
      `idle: idle.tasks=${idle.tasks} (want 50); executor RSS ${(rssReady / 1024).toFixed(1)} MiB at ready -> ${(rssIdle / 1024).toFixed(1)} MiB idle (+${((rssIdle - rssReady) / 1024).toFixed(1)} MiB); model calls made ${calls} (want 0); ${dbFacts(dir)}`,
    );
    if (idle.tasks !== 50) problem(`idle: ${idle.tasks}`);
    await d.stop();
  }

  // 5. latency: 1 task × 200 steps, sequential, each setting.
  for (const [label, setting] of Object.entries(SETTINGS)) {
    const dir = newDir(`lat ${label}`);
    const task = `lat${seq}`;
    const d = startDriver({ mode: 'run', dir, tasks: [task], steps: 200, concurrency: 1, ...setting });
    await d.waitFor('ready');
    await d.waitFor('done', 300_000);
    const tDone = performance.now();
    const calls = stub.calls.filter((c) => c.task === task);
    const first = calls[0].at;
    const last = calls[calls.length - 1].at;
    report(
      `latency ${label}: 200 steps, ${((last - first) / 199).toFixed(2)} ms/step (stub call to call), ${((tDone - first) / 200).toFixed(2)} ms/step (first call to done); ${dbFacts(dir)}`,
    );
    await d.stop();
  }
} catch (e) {
  problem(e.stack ?? String(e));
} finally {
  for (const c of children) c.kill('SIGKILL');
  await stub.close();
  rmSync(base, { recursive: true, force: true });
  report(problems ? `${problems} problem(s)` : 'all checks passed');
  process.exit(problems ? 1 : 0);
}
