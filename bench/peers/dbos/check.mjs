// Standalone check of the DBOS driver (driver.mjs), outside the bench: run from the repository root
// after `npx tsc -p .` as `node bench/peers/dbos/check.mjs`. It copies the driver and the shared
// step beside DBOS's packages (.peers/dbos/run/), starts a throwaway PostgreSQL and the stub model,
// and goes through run, kill + resume, a kill inside a held tool step, and idle, printing figures.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const { startPostgres } = await import(join(root, 'dist/test/support/postgres.js'));
const { startModelStub } = await import(join(root, 'dist/bench/peers/model-stub.js'));
const { DriverLine } = await import(join(root, 'dist/bench/peers/driver-protocol.js'));

const runDir = join(root, '.peers/dbos/run');
mkdirSync(runDir, { recursive: true });
cpSync(join(root, 'bench/peers/dbos'), join(runDir, 'dbos'), { recursive: true });
cpSync(join(root, 'bench/peers/shared'), join(runDir, 'shared'), { recursive: true });
const driverPath = join(runDir, 'dbos/driver.mjs');

const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rssKb = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  } catch {
    return NaN;
  }
};

const children = new Set();
function startDriver(config, label) {
  const child = spawn(process.execPath, [driverPath, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  const lines = [];
  const waiters = [];
  let buffered = '';
  const stderr = [];
  child.stderr.on('data', (d) => {
    stderr.push(String(d));
    if (process.env.CHECK_VERBOSE) process.stderr.write(`[${label}] ${d}`);
  });
  child.stdout.on('data', (d) => {
    buffered += d;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      let line;
      try {
        line = DriverLine.parse(JSON.parse(text));
      } catch (err) {
        check(false, `${label}: protocol line ${JSON.stringify(text)}: ${err.message}`);
        continue;
      }
      line.at = performance.now();
      lines.push(line);
      for (const w of [...waiters]) if (w.t === line.t || line.t === 'error') w.resolve(line);
    }
  });
  const exited = new Promise((res) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      res({ code, signal });
    }),
  );
  return {
    child,
    lines,
    exited,
    stderr,
    next(t, timeoutMs = 120_000) {
      const seen = lines.find((l) => l.t === t || l.t === 'error');
      if (seen) return Promise.resolve(seen);
      return new Promise((res, rej) => {
        const timer = setTimeout(
          () => rej(new Error(`${label}: no ${t} line in ${timeoutMs} ms; stderr: ${stderr.join('').slice(-2000)}`)),
          timeoutMs,
        );
        waiters.push({
          t,
          resolve: (l) => {
            clearTimeout(timer);
            res(l);
          },
        });
      }).then((l) => {
        if (l.t === 'error')
          throw new Error(`${label}: error line: ${l.message}; stderr: ${stderr.join('').slice(-2000)}`);
        return l;
      });
    },
    async close() {
      child.stdin.end();
      return exited;
    },
  };
}

const pg = await startPostgres();
/** The postmaster started again by pgRestart (stopped by us at the end), if any. */
let restarted;

function childPids(pid) {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** SIGKILLs the postmaster and its backends, then starts the same cluster again on the same port. */
async function killAndRestartPostgres(pid) {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const { uid, gid } = statSync(`/proc/${pid}`);
  const kids = childPids(pid);
  process.kill(pid, 'SIGKILL');
  for (const kid of kids) {
    try {
      process.kill(kid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  const killedAt = performance.now();
  await sleep(1000);
  for (let attempt = 1; attempt <= 20; attempt++) {
    const env = Object.fromEntries(Object.entries(process.env).filter(([n]) => !n.startsWith('PG')));
    const child = spawn(argv[0], argv.slice(1), { cwd: pg.dir, env, uid, gid, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.on('data', (d) => (log += d));
    const up = await new Promise((res) => {
      const timer = setTimeout(() => res(true), 1500);
      child.on('exit', () => {
        clearTimeout(timer);
        res(false);
      });
    });
    if (up) {
      restarted = child;
      return { killedAt, startedAt: performance.now() };
    }
    console.log(`pg restart attempt ${attempt} failed: ${log.trim().split('\n').slice(-1)[0]}`);
    await sleep(500);
  }
  throw new Error('PostgreSQL did not start again');
}

async function pgRestart() {
  const dir = newDir('pgkill');
  dirs.push(dir);
  const tasks = ['p1', 'p2'];
  const repeatsBefore = stub.repeatedCalls();
  const d = startDriver(base(dir, { mode: 'run', tasks, steps: 40 }), 'pgkill-run');
  await d.next('ready');
  while (callsOf(tasks).length < 10) await sleep(2);
  const { killedAt, startedAt } = await killAndRestartPostgres(pg.pid);
  const before = callsOf(tasks).length;
  console.log(
    `pg-restart: PostgreSQL SIGKILLed after ${before} calls, running again ${(startedAt - killedAt).toFixed(0)} ms later (executor left running)`,
  );
  const outcome = await Promise.race([
    d.next('done', 90_000).then(
      (l) => ({ done: l }),
      (err) => ({ err }),
    ),
    d.exited.then((e) => ({ exited: e })),
  ]);
  const after = callsOf(tasks).filter((c) => c.at > killedAt);
  if (outcome.done) {
    console.log(
      `pg-restart: the executor carried on: done ${(outcome.done.at - killedAt).toFixed(0)} ms after the kill; ` +
        `first model call after it at +${after.length ? (after[0].at - killedAt).toFixed(0) : '-'} ms; stub.repeatedCalls() +${stub.repeatedCalls() - repeatsBefore}`,
    );
    for (const task of tasks) {
      const steps = new Set(stub.calls.filter((c) => c.task === task).map((c) => c.step));
      check(steps.size === 40, `pg-restart: ${task} has all 40 steps (${steps.size})`);
    }
    await d.close();
  } else {
    console.log(
      `pg-restart: the executor did not finish: ${JSON.stringify(outcome.exited ?? String(outcome.err))}; ${after.length} model calls after the kill`,
    );
    console.log(`pg-restart: executor stderr tail: ${d.stderr.join('').slice(-1500)}`);
    d.child.kill('SIGKILL');
    await d.exited;
    // The way back: a new executor resumes (the bench's resume).
    const r = startDriver(base(dir, { mode: 'resume', tasks, steps: 40 }), 'pgkill-resume');
    await r.next('ready');
    const done = await r.next('done');
    console.log(
      `pg-restart: a resumed executor finished (ended ${done.ended}); stub.repeatedCalls() +${stub.repeatedCalls() - repeatsBefore}`,
    );
    await r.close();
  }
}
const stub = await startModelStub({ payloadBytes: 4096 });
const base = (dir, extra) => ({
  dir,
  modelUrl: stub.url,
  ports: [],
  postgresUrl: pg.url,
  concurrency: 4,
  ...extra,
});
const newDir = (name) => mkdtempSync(join(tmpdir(), `dbos-check-${name}-`));
const dirs = [];
const callsOf = (tasks) => stub.calls.filter((c) => tasks.includes(c.task));

try {
  // 1. run: 4 Tasks × 5 steps.
  {
    const dir = newDir('run');
    dirs.push(dir);
    const tasks = ['r1', 'r2', 'r3', 'r4'];
    const t0 = performance.now();
    const d = startDriver(base(dir, { mode: 'run', tasks, steps: 5 }), 'run');
    const ready = await d.next('ready');
    console.log(
      `run: ready after ${(ready.at - t0).toFixed(0)} ms (first launch creates the database): ${JSON.stringify(ready)}`,
    );
    const done = await d.next('done');
    check(done.ended === 4, `run: done ended ${done.ended}`);
    for (const task of tasks) {
      const steps = stub.calls.filter((c) => c.task === task).map((c) => c.step);
      check(JSON.stringify(steps) === '[1,2,3,4,5]', `run: ${task} steps ${JSON.stringify(steps)}`);
      check(existsSync(join(dir, 'work', task, 'steps/000005.json')), `run: ${task} wrote steps/000005.json`);
    }
    const calls = callsOf(tasks);
    const gaps = tasks.flatMap((task) => {
      const at = calls.filter((c) => c.task === task).map((c) => c.at);
      return at.slice(1).map((a, i) => a - at[i]);
    });
    console.log(
      `run: ready→done ${(done.at - ready.at).toFixed(0)} ms for 20 steps; per step within a Task (4 in flight) ` +
        `mean ${(gaps.reduce((a, b) => a + b, 0) / gaps.length).toFixed(1)} ms, min ${Math.min(...gaps).toFixed(1)}, max ${Math.max(...gaps).toFixed(1)}`,
    );
    const exit = await d.close();
    check(exit.code === 0, `run: exit on stdin close ${JSON.stringify(exit)}`);
  }

  // 1b. run, sequential: 1 Task × 30 steps, to see one step's cost alone.
  {
    const dir = newDir('seq');
    dirs.push(dir);
    const d = startDriver(base(dir, { mode: 'run', tasks: ['q1'], steps: 30, concurrency: 1 }), 'seq');
    const ready = await d.next('ready');
    const done = await d.next('done');
    const at = callsOf(['q1']).map((c) => c.at);
    const gaps = at.slice(1).map((a, i) => a - at[i]);
    console.log(
      `seq: 1 Task × 30 steps ready→done ${(done.at - ready.at).toFixed(0)} ms; per step mean ${(gaps.reduce((a, b) => a + b, 0) / gaps.length).toFixed(1)} ms, ` +
        `min ${Math.min(...gaps).toFixed(1)}; first call ${(at[0] - ready.at).toFixed(0)} ms after ready (queue poll)`,
    );
    await d.close();
  }

  // 2. run 2 Tasks × 30 steps, SIGKILL after ~10 calls, resume.
  {
    const dir = newDir('kill');
    dirs.push(dir);
    const tasks = ['k1', 'k2'];
    const repeatsBefore = stub.repeatedCalls();
    const d = startDriver(base(dir, { mode: 'run', tasks, steps: 30 }), 'kill-run');
    await d.next('ready');
    while (callsOf(tasks).length < 10) await sleep(2);
    d.child.kill('SIGKILL');
    const killedAt = performance.now();
    await d.exited;
    const before = callsOf(tasks).length;
    console.log(`kill: SIGKILLed the executor after ${before} stub calls`);
    const r = startDriver(base(dir, { mode: 'resume', tasks, steps: 30 }), 'kill-resume');
    const ready = await r.next('ready');
    const done = await r.next('done');
    check(done.ended === 2, `resume: done ended ${done.ended}`);
    for (const task of tasks) {
      const steps = new Set(stub.calls.filter((c) => c.task === task).map((c) => c.step));
      check(steps.size === 30, `resume: ${task} has all 30 steps (${steps.size})`);
    }
    const firstAfter = callsOf(tasks)[before];
    console.log(
      `resume: ready ${(ready.at - killedAt).toFixed(0)} ms after the kill; first model call ${(firstAfter.at - killedAt).toFixed(0)} ms after the kill ` +
        `(${(firstAfter.at - ready.at).toFixed(0)} ms after ready); done ${(done.at - killedAt).toFixed(0)} ms after the kill; ` +
        `stub.repeatedCalls() +${stub.repeatedCalls() - repeatsBefore}`,
    );
    for (const task of tasks) {
      const again = [...Array(30).keys()].map((i) => i + 1).filter((s) => stub.count(task, s) > 1);
      if (again.length) console.log(`resume: ${task} steps called more than once: ${again.join(', ')}`);
    }
    const exit = await r.close();
    check(exit.code === 0, `resume: exit on stdin close ${JSON.stringify(exit)}`);
  }

  // 3. a kill inside a held tool step: does the tool run twice?
  {
    const dir = newDir('hold');
    dirs.push(dir);
    const task = 'h1';
    stub.setHold({ task, step: 3, sleepS: 2 });
    const d = startDriver(base(dir, { mode: 'run', tasks: [task], steps: 5 }), 'hold-run');
    await d.next('ready');
    const log = join(dir, 'work', task, 'tools.log');
    const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);
    while (lines() < 1) await sleep(5);
    d.child.kill('SIGKILL');
    const killedAt = performance.now();
    await d.exited;
    const r = startDriver(base(dir, { mode: 'resume', tasks: [task], steps: 5 }), 'hold-resume');
    const ready = await r.next('ready');
    const done = await r.next('done');
    check(done.ended === 1, `hold: done ended ${done.ended}`);
    console.log(
      `hold: tools.log has ${lines()} lines (2 = the tool step ran again); model step 3 called ${stub.count(task, 3)} time(s); ` +
        `ready ${(ready.at - killedAt).toFixed(0)} ms, done ${(done.at - killedAt).toFixed(0)} ms after the kill (the step sleeps 2 s)`,
    );
    stub.setHold(undefined);
    await r.close();
  }

  // 4. idle: 50 Tasks waiting on DBOS.recv.
  {
    const dir = newDir('idle');
    dirs.push(dir);
    const tasks = [...Array(50).keys()].map((i) => `i${i + 1}`);
    const d = startDriver(base(dir, { mode: 'idle', tasks, steps: 5 }), 'idle');
    const ready = await d.next('ready');
    await sleep(500);
    const rssBefore = rssKb(ready.pids.executor);
    const idle = await d.next('idle');
    check(idle.tasks === 50, `idle: tasks ${idle.tasks}`);
    await sleep(500);
    const rssAfter = rssKb(ready.pids.executor);
    console.log(
      `idle: 50 waiting ${(idle.at - ready.at).toFixed(0)} ms after ready; executor RSS ${(rssBefore / 1024).toFixed(1)} MB → ${(rssAfter / 1024).toFixed(1)} MB`,
    );
    const exit = await d.close();
    check(exit.code === 0, `idle: exit on stdin close ${JSON.stringify(exit)}`);
  }

  // 5. (optional) PostgreSQL SIGKILLed and started again under a running executor.
  if (!process.env.CHECK_SKIP_PG_RESTART) await pgRestart();
} catch (err) {
  check(false, `check threw: ${err.stack ?? err}`);
} finally {
  for (const child of children) child.kill('SIGKILL');
  await stub.close();
  if (restarted && restarted.exitCode === null) {
    restarted.kill('SIGINT');
    await new Promise((res) => restarted.on('exit', res));
  }
  await pg.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
console.log(failures.length ? `${failures.length} FAILED` : 'all checks passed');
process.exit(failures.length ? 1 : 0);
