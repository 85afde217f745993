// Scenario: peers — the Host side by side with the durable-execution systems a user would pick
// instead (issue 48): Restate (server and TypeScript SDK), DBOS (on PostgreSQL) and LangGraph JS
// (SQLite checkpointer, run both as a fair durable peer — `durability: "sync"`, `synchronous=FULL`
// — and with its defaults), all installed by `npm run peers:install` into .peers/, and the Host on
// LMDB and on PostgreSQL, each run by its own driver process (driver-protocol.ts) on one workload:
// agent Tasks of K steps, each step one call to the stub model (model-stub.ts: ~4 KB answers,
// streamed) and the tool call it asks for, each durable before the next as each system makes a
// step durable. The stub times every step, outside every system, the same way for all.
//
// Measured, per system, in one run:
// (a) one Task's step latency: the time between its successive model calls, p50 and p99;
// (b) throughput: 256 Tasks at once (each system's own limit of what runs at once in force), steps
//     per second from the driver's `ready` to its `done`;
// (c) recovery: the executing process SIGKILLed halfway through a run of many Tasks, then started
//     again as a user of that system starts it: the time from the kill to the driver ready, to the
//     first step taken again, and to every Task that was in flight at the kill taking a step again;
// (d) steps run twice: a Task's step whose tool command is held (it appends its line to tools.log,
//     then sleeps) when the executing process is SIGKILLed (and, for Restate, the server): the
//     lines in tools.log after the Task ended, and the model calls made again;
// (e) resident memory per idle Task (processes' RSS, before and after N Tasks wait for an event
//     that never comes) and bytes on disk per step (the state folder, and the database's size on
//     PostgreSQL, after (b));
// and fsyncs per step (strace -f -c over the drivers, their servers and PostgreSQL's processes).
//
//   node dist/bench/peers/peers.bench.js [--quick]
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import type { BenchContext, BenchRow } from '../report/results-model.js';
import { scenarioArgs } from '../util.js';
import type { DriverConfig, Peer } from './driver-protocol.js';
import { startModelStub, type ModelStub, type StubCall } from './model-stub.js';
import { PeerProcess, killPid, residentBytes, type DriverCommand } from './peer-process.js';
import { percentile } from '../confinement.bench.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PEERS_DIR = join(ROOT, '.peers');

/** One system of the run. */
export interface System {
  key: string;
  label: string;
  peer?: Peer;
  host?: 'lmdb' | 'postgres';
  /** Extra driver settings (LangGraph's durability). */
  extra?: Partial<DriverConfig>;
  /** Whether it counts as a peer the Host's goals are judged against (a fair durability setting). */
  judged: boolean;
}

export const SYSTEMS: System[] = [
  { key: 'host-lmdb', label: 'Ordivon Host, LMDB', host: 'lmdb', judged: false },
  { key: 'host-postgres', label: 'Ordivon Host, PostgreSQL', host: 'postgres', judged: false },
  { key: 'restate', label: 'Restate', peer: 'restate', judged: true },
  { key: 'dbos', label: 'DBOS', peer: 'dbos', judged: true },
  {
    key: 'langgraph-sync',
    label: 'LangGraph, durability sync + synchronous=FULL',
    peer: 'langgraph',
    extra: { durability: 'sync', syncFull: true },
    judged: true,
  },
  {
    key: 'langgraph-default',
    label: 'LangGraph, its defaults (async, synchronous=NORMAL)',
    peer: 'langgraph',
    extra: { durability: 'async', syncFull: false },
    judged: false,
  },
];

/** The sizes of each measurement. */
export interface PeerSizes {
  latencySteps: number;
  throughputTasks: number;
  throughputSteps: number;
  recoveryTasks: number;
  recoverySteps: number;
  idleTasks: number;
  concurrency: number;
  straceTasks: number;
  straceSteps: number;
}

export const PEER_SIZES: { full: PeerSizes; quick: PeerSizes } = {
  full: {
    latencySteps: 200,
    throughputTasks: 256,
    throughputSteps: 20,
    recoveryTasks: 256,
    recoverySteps: 30,
    idleTasks: 2_000,
    concurrency: 256,
    straceTasks: 16,
    straceSteps: 10,
  },
  quick: {
    latencySteps: 40,
    throughputTasks: 32,
    throughputSteps: 10,
    recoveryTasks: 32,
    recoverySteps: 10,
    idleTasks: 200,
    concurrency: 32,
    straceTasks: 4,
    straceSteps: 5,
  },
};

const PAYLOAD_BYTES = 4_096;
/** How long the held step's command sleeps: the kill lands while it runs. */
const HOLD_SLEEP_S = 3;
const LONG = 15 * 60_000;

/** What is missing for the scenario to run, or undefined. */
export function peersMissing(): string | undefined {
  const pinned = JSON.parse(readFileSync(join(ROOT, 'bench', 'peers', 'peer-packages.json'), 'utf8')) as Record<
    string,
    Record<string, string>
  >;
  const lacking: string[] = [];
  for (const [peer, packages] of Object.entries(pinned))
    for (const [name, version] of Object.entries(packages)) {
      const manifest = join(PEERS_DIR, peer, 'node_modules', name, 'package.json');
      const have = existsSync(manifest)
        ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
        : undefined;
      if (have !== version) lacking.push(`${peer}: ${name}@${version}`);
    }
  return lacking.length > 0 ? `${lacking.join(', ')} not installed (npm run peers:install)` : undefined;
}

async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve) => {
          const s = createServer();
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** The driver program of a system (a peer's copied next to its packages first). */
function driverCommand(system: System, wrap: string[] = []): DriverCommand {
  if (system.host) {
    const file = fileURLToPath(new URL('./host-driver.js', import.meta.url));
    return { command: wrap[0] ?? 'node', args: [...wrap.slice(1), ...(wrap.length > 0 ? ['node'] : []), file] };
  }
  const peer = system.peer!;
  const run = join(PEERS_DIR, peer, 'run');
  mkdirSync(run, { recursive: true });
  cpSync(join(ROOT, 'bench', 'peers', peer), join(run, peer), { recursive: true });
  cpSync(join(ROOT, 'bench', 'peers', 'shared'), join(run, 'shared'), { recursive: true });
  const file = join(run, peer, 'driver.mjs');
  return { command: wrap[0] ?? 'node', args: [...wrap.slice(1), ...(wrap.length > 0 ? ['node'] : []), file] };
}

interface Env {
  stub: ModelStub;
  postgres?: { url: string; pid: number; createDatabase(name: string): Promise<string>; size(): Promise<number> };
  work: string;
  log: (line: string) => void;
  sizes: PeerSizes;
}

let runs = 0;
let databases = 0;

/** Starts a system's driver on a fresh (or the given) folder. */
async function startDriver(
  env: Env,
  system: System,
  mode: DriverConfig['mode'],
  tasks: string[],
  steps: number,
  options: { dir?: string; wrap?: string[]; concurrency?: number; postgresUrl?: string; ports?: number[] } = {},
): Promise<{ proc: PeerProcess; dir: string; config: Record<string, unknown> }> {
  const dir = options.dir ?? join(env.work, `${system.key}-${++runs}`);
  mkdirSync(dir, { recursive: true });
  const config: Record<string, unknown> = {
    mode,
    dir,
    modelUrl: env.stub.url,
    tasks,
    steps,
    concurrency: options.concurrency ?? env.sizes.concurrency,
    ports: options.ports ?? (await freePorts(5)),
    ...(system.extra ?? {}),
  };
  if (system.peer === 'dbos' || system.host === 'postgres') {
    if (!env.postgres) throw new Error(`${system.key} needs PostgreSQL`);
    // A Host on PostgreSQL gets a database of its own; a resumed one the same again.
    config['postgresUrl'] =
      options.postgresUrl ??
      (system.host === 'postgres' ? await env.postgres.createDatabase(`host_${++databases}`) : env.postgres.url);
  }
  if (system.host) config['store'] = system.host;
  const proc = new PeerProcess(system.key, driverCommand(system, options.wrap), config);
  return { proc, dir, config };
}

/**
 * A resumed driver's options: the killed one's folder, database and ports (a server that outlived
 * its driver, Restate's, knows the service at the address it was registered with).
 */
function again(first: { dir: string; config: Record<string, unknown> }) {
  const url = first.config['postgresUrl'];
  return {
    dir: first.dir,
    ports: first.config['ports'] as number[],
    ...(typeof url === 'string' ? { postgresUrl: url } : {}),
  };
}

function taskIds(system: System, phase: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${system.key}-${phase}-${String(i).padStart(5, '0')}`);
}

/** The calls of `tasks` made after index `from` of the stub's record. */
function callsOf(stub: ModelStub, from: number, tasks: Set<string>): StubCall[] {
  return stub.calls.slice(from).filter((c) => tasks.has(c.task));
}

/** Model calls made again: per (Task, step), calls beyond the first. */
function repeated(calls: StubCall[]): number {
  const counts = new Map<string, number>();
  for (const c of calls) counts.set(`${c.task}#${c.step}`, (counts.get(`${c.task}#${c.step}`) ?? 0) + 1);
  return [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
}

/** Successive calls' intervals per Task (the first call of each step). */
function stepIntervals(calls: StubCall[]): number[] {
  const first = new Map<string, Map<number, number>>();
  for (const c of calls) {
    const steps = first.get(c.task) ?? new Map<number, number>();
    if (!steps.has(c.step)) steps.set(c.step, c.at);
    first.set(c.task, steps);
  }
  const out: number[] = [];
  for (const steps of first.values()) {
    const ordered = [...steps.entries()].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < ordered.length; i++)
      if (ordered[i]![0] === ordered[i - 1]![0] + 1) out.push(ordered[i]![1] - ordered[i - 1]![1]);
  }
  return out.sort((a, b) => a - b);
}

async function runToDone(
  env: Env,
  system: System,
  tasks: string[],
  steps: number,
  options: { wrap?: string[]; concurrency?: number } = {},
) {
  const { proc, dir } = await startDriver(env, system, 'run', tasks, steps, options);
  try {
    const ready = await proc.next('ready', 180_000);
    const done = await proc.next('done', LONG);
    if (done.ended !== tasks.length) throw new Error(`${system.key}: ${done.ended} of ${tasks.length} Tasks ended`);
    return { ready, done, dir };
  } finally {
    await proc.finish();
  }
}

/** (a): one Task alone. */
async function latency(env: Env, system: System): Promise<BenchRow> {
  const tasks = taskIds(system, 'latency', 1);
  const from = env.stub.calls.length;
  const { ready } = await runToDone(env, system, tasks, env.sizes.latencySteps, { concurrency: 1 });
  const calls = callsOf(env.stub, from, new Set(tasks));
  const gaps = stepIntervals(calls);
  const p50 = percentile(gaps, 50);
  const p99 = percentile(gaps, 99);
  env.log(
    `peers: ${system.key} (a) one Task, ${gaps.length} steps: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`,
  );
  return {
    scenario: 'peers',
    name: `peers (a) step latency, one Task: ${system.key}`,
    medianMs: p50,
    minMs: gaps[0] ?? 0,
    maxMs: gaps.at(-1) ?? 0,
    iterations: gaps.length,
    detail: {
      system: system.key,
      measure: 'latency',
      p50Ms: p50,
      p99Ms: p99,
      version: ready.version,
      durability: ready.durability,
      repeatedCalls: repeated(calls),
    },
  };
}

/** Bytes on disk under `dir`, its tools' work folder left out (the same files for every system). */
function diskBytes(dir: string): number {
  let total = 0;
  const walk = (path: string) => {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const entry of readdirSync(path)) {
        if (path === dir && entry === 'work') continue;
        walk(join(path, entry));
      }
    } else total += st.blocks * 512;
  };
  walk(dir);
  return total;
}

/** (b) and (e)'s disk: many Tasks at once. */
async function throughput(env: Env, system: System): Promise<BenchRow> {
  const { throughputTasks: count, throughputSteps: steps } = env.sizes;
  const tasks = taskIds(system, 'throughput', count);
  const from = env.stub.calls.length;
  const dbBefore = system.peer === 'dbos' || system.host === 'postgres' ? await env.postgres!.size() : 0;
  const { ready, done, dir } = await runToDone(env, system, tasks, steps);
  const calls = callsOf(env.stub, from, new Set(tasks));
  const seconds = (done.at - ready.at) / 1000;
  const rate = (count * steps) / seconds;
  const dbBytes = system.peer === 'dbos' || system.host === 'postgres' ? (await env.postgres!.size()) - dbBefore : 0;
  const disk = diskBytes(dir) + dbBytes;
  const gaps = stepIntervals(calls);
  env.log(
    `peers: ${system.key} (b) ${count} Tasks × ${steps} steps: ${rate.toFixed(1)} steps/s; disk ${(disk / (count * steps)).toFixed(0)} B/step`,
  );
  return {
    scenario: 'peers',
    name: `peers (b) steps per second, ${count} Tasks: ${system.key}`,
    medianMs: (seconds * 1000) / (count * steps),
    iterations: count * steps,
    rate,
    rateUnit: 'steps/s',
    detail: {
      system: system.key,
      measure: 'throughput',
      tasks: count,
      steps,
      seconds,
      stepsPerSecond: rate,
      stepP50Ms: percentile(gaps, 50),
      stepP99Ms: percentile(gaps, 99),
      diskBytes: disk,
      databaseBytes: dbBytes,
      diskBytesPerStep: disk / (count * steps),
      repeatedCalls: repeated(calls),
    },
  };
}

/** (c): the executor SIGKILLed halfway through, then started again. */
async function recovery(env: Env, system: System): Promise<BenchRow> {
  const { recoveryTasks: count, recoverySteps: steps } = env.sizes;
  const tasks = taskIds(system, 'recovery', count);
  const ids = new Set(tasks);
  const from = env.stub.calls.length;
  const first = await startDriver(env, system, 'run', tasks, steps);
  const half = (count * steps) / 2;
  let killAt: number;
  let goneAt: number;
  let server: number | undefined;
  try {
    const ready = await first.proc.next('ready', 180_000);
    server = ready.pids.server;
    await until(() => callsOf(env.stub, from, ids).length >= half, LONG, `${system.key}: half the steps`);
    first.proc.child.kill('SIGKILL');
    killPid(ready.pids.executor === first.proc.child.pid ? undefined : ready.pids.executor);
    killAt = performance.now();
    await first.proc.kill();
    // A request the killed process sent just before its end can reach the stub just after the
    // kill: only calls that arrive once it is gone count as steps taken again.
    goneAt = performance.now();
  } catch (error) {
    await first.proc.kill();
    killPid(server);
    throw error;
  }
  const before = env.stub.calls.slice(from).filter((c) => ids.has(c.task) && c.at <= killAt);
  const stepsOf = new Map<string, number>();
  for (const c of before) stepsOf.set(c.task, Math.max(stepsOf.get(c.task) ?? 0, c.step));
  const inFlight = [...stepsOf.entries()].filter(([, s]) => s < steps).map(([t]) => t);
  const second = await startDriver(env, system, 'resume', tasks, steps, again(first));
  try {
    const ready = await second.proc.next('ready', LONG);
    await second.proc.next('done', LONG);
    const after = env.stub.calls.slice(from).filter((c) => ids.has(c.task) && c.at > goneAt);
    const firstAfter = new Map<string, number>();
    for (const c of after) if (!firstAfter.has(c.task)) firstAfter.set(c.task, c.at);
    const resumed = inFlight.map((t) => firstAfter.get(t)).filter((t): t is number => t !== undefined);
    if (resumed.length !== inFlight.length)
      throw new Error(`${system.key}: ${inFlight.length - resumed.length} in-flight Tasks never took a step again`);
    const allMs = Math.max(...resumed) - killAt;
    const firstMs = Math.min(...after.map((c) => c.at)) - killAt;
    const readyMs = ready.at - killAt;
    env.log(
      `peers: ${system.key} (c) killed after ${before.length} steps (${inFlight.length} Tasks in flight): ready ${readyMs.toFixed(0)} ms, first step ${firstMs.toFixed(0)} ms, all in-flight Tasks stepping ${allMs.toFixed(0)} ms after the kill`,
    );
    return {
      scenario: 'peers',
      name: `peers (c) kill → every in-flight Task stepping again: ${system.key}`,
      medianMs: allMs,
      iterations: 1,
      tasks: count,
      detail: {
        system: system.key,
        measure: 'recovery',
        tasks: count,
        steps,
        stepsBeforeKill: before.length,
        inFlightAtKill: inFlight.length,
        readyMs,
        firstStepMs: firstMs,
        allInFlightSteppingMs: allMs,
        repeatedCalls: repeated(env.stub.calls.slice(from).filter((c) => ids.has(c.task))),
      },
    };
  } finally {
    await second.proc.finish();
    killPid(server);
  }
}

function linesIn(dir: string, name: string): number {
  let found = 0;
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === name) found += readFileSync(full, 'utf8').split('\n').filter(Boolean).length;
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

/** (d): the held step's process killed while its tool runs. */
async function duplicates(env: Env, system: System, kill: 'executor' | 'server'): Promise<BenchRow> {
  const tasks = taskIds(system, `dup-${kill}`, 4);
  const ids = new Set(tasks);
  const steps = 8;
  const held = { task: tasks[0]!, step: 4, sleepS: HOLD_SLEEP_S };
  env.stub.setHold(held);
  const from = env.stub.calls.length;
  const first = await startDriver(env, system, 'run', tasks, steps, { concurrency: 4 });
  const work = join(first.dir, 'work', held.task);
  let server: number | undefined;
  let resumedBy: PeerProcess = first.proc;
  try {
    const ready = await first.proc.next('ready', 180_000);
    server = ready.pids.server;
    await until(() => linesIn(work, 'tools.log') > 0, LONG, `${system.key}: the held step's line`);
    if (kill === 'executor') {
      await first.proc.kill();
      resumedBy = (await startDriver(env, system, 'resume', tasks, steps, { ...again(first), concurrency: 4 })).proc;
      await resumedBy.next('ready', LONG);
    } else {
      killPid(server);
      first.proc.send({ t: 'restart-server' });
      server = (await first.proc.next('server', 180_000)).pid;
    }
    await resumedBy.next('done', LONG);
    const runs = linesIn(work, 'tools.log');
    const calls = callsOf(env.stub, from, ids);
    env.log(
      `peers: ${system.key} (d) ${kill} killed while step ${held.step}'s tool ran: the tool ran ${runs} time(s); ${repeated(calls)} model call(s) made again`,
    );
    return {
      scenario: 'peers',
      name: `peers (d) steps run twice, ${kill} killed mid-step: ${system.key}`,
      medianMs: 0,
      iterations: 1,
      detail: {
        system: system.key,
        measure: `duplicates-${kill}`,
        heldToolRuns: runs,
        duplicateSteps: Math.max(0, runs - 1),
        repeatedModelCalls: repeated(calls),
      },
    };
  } finally {
    env.stub.setHold(undefined);
    await resumedBy.finish();
    if (resumedBy !== first.proc) await first.proc.finish();
    killPid(server);
  }
}

/** (e): resident memory of N idle Tasks. */
async function memory(env: Env, system: System): Promise<BenchRow> {
  const count = env.sizes.idleTasks;
  const tasks = taskIds(system, 'idle', count);
  const { proc } = await startDriver(env, system, 'idle', tasks, 1);
  let server: number | undefined;
  try {
    const ready = await proc.next('ready', 180_000);
    server = ready.pids.server;
    const pids = [ready.pids.executor, ...(server ? [server] : [])];
    await settle();
    const before = residentBytes(pids);
    await proc.next('idle', LONG);
    await settle();
    const after = residentBytes(pids);
    const perTask = (after - before) / count;
    env.log(
      `peers: ${system.key} (e) ${count} idle Tasks: RSS ${(before / 2 ** 20).toFixed(1)} → ${(after / 2 ** 20).toFixed(1)} MiB, ${(perTask / 1024).toFixed(1)} KiB per idle Task`,
    );
    return {
      scenario: 'peers',
      name: `peers (e) resident bytes per idle Task: ${system.key}`,
      medianMs: 0,
      iterations: count,
      detail: {
        system: system.key,
        measure: 'memory',
        idleTasks: count,
        rssBefore: before,
        rssAfter: after,
        bytesPerIdleTask: perTask,
      },
    };
  } finally {
    await proc.finish();
    killPid(server);
  }
}

/** Lets the processes' heaps and page counts come to rest before a resident-memory reading. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 2_000));
}

/** fsyncs per step: the drivers (and what they start) under strace -f -c, PostgreSQL's processes attached. */
async function fsyncs(env: Env, system: System): Promise<BenchRow | undefined> {
  const { straceTasks: count, straceSteps: steps } = env.sizes;
  const out = join(env.work, `${system.key}-strace.txt`);
  const calls = ['fsync', 'fdatasync', 'sync_file_range', 'msync', 'syncfs', 'sync'];
  const trace = `trace=${calls.join(',')}`;
  let pgTrace: ReturnType<typeof spawn> | undefined;
  const pgOut = join(env.work, `${system.key}-strace-pg.txt`);
  if (env.postgres && (system.peer === 'dbos' || system.host === 'postgres')) {
    const pids = [env.postgres.pid, ...childrenOf(env.postgres.pid)];
    pgTrace = spawn(
      'strace',
      ['-f', '-c', '-qq', '-e', trace, '-o', pgOut, ...pids.flatMap((p) => ['-p', String(p)])],
      {
        stdio: 'ignore',
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  try {
    await runToDone(env, system, taskIds(system, 'strace', count), steps, {
      wrap: ['strace', '-f', '-c', '-qq', '-e', trace, '-o', out],
    });
  } finally {
    if (pgTrace) {
      const exited = new Promise((resolve) => pgTrace!.once('exit', resolve));
      pgTrace.kill('SIGINT');
      await exited;
    }
  }
  const total = straceCalls(out) + (pgTrace ? straceCalls(pgOut) : 0);
  const perStep = total / (count * steps);
  env.log(`peers: ${system.key} fsyncs: ${total} for ${count * steps} steps, ${perStep.toFixed(2)} per step`);
  return {
    scenario: 'peers',
    name: `peers fsyncs per step: ${system.key}`,
    medianMs: 0,
    iterations: count * steps,
    detail: { system: system.key, measure: 'fsyncs', syncCalls: total, fsyncsPerStep: perStep },
  };
}

function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The total of the `calls` column of an `strace -c` summary. */
function straceCalls(file: string): number {
  if (!existsSync(file)) return 0;
  let total = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const cols = line.trim().split(/\s+/);
    // % time, seconds, usecs/call, calls, [errors,] syscall
    if (cols.length >= 5 && /^\d/.test(cols[0]!) && cols.at(-1) !== 'total') total += Number(cols[3]);
  }
  return total;
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The whole scenario: every system, every measurement, in this process's one run. */
export async function runPeersBench(
  ctx: BenchContext & { systems?: string[] },
): Promise<{ rows: BenchRow[]; note?: string }> {
  const missing = peersMissing();
  if (missing) return { rows: [], note: `peers skipped: ${missing}` };
  const sizes = ctx.quick ? PEER_SIZES.quick : PEER_SIZES.full;
  const systems = SYSTEMS.filter((s) => !ctx.systems || ctx.systems.includes(s.key));
  const { startPostgres, createDatabase, sql } = await import('../../test/support/postgres.js');
  const work = mkdtempSync(join(tmpdir(), 'ordivon-bench-peers-'));
  const stub = await startModelStub({ payloadBytes: PAYLOAD_BYTES });
  const pg = systems.some((s) => s.peer === 'dbos' || s.host === 'postgres') ? await startPostgres() : undefined;
  const env: Env = {
    stub,
    work,
    log: ctx.log,
    sizes,
    ...(pg
      ? {
          postgres: {
            url: pg.url,
            pid: pg.pid,
            createDatabase: (name: string) => createDatabase(pg.url, name),
            size: async () =>
              Number(
                (
                  await sql(
                    pg.url,
                    'SELECT sum(pg_database_size(datname))::bigint AS n FROM pg_database WHERE NOT datistemplate',
                  )
                ).rows[0].n,
              ),
          },
        }
      : {}),
  };
  const rows: BenchRow[] = [];
  const failures: string[] = [];
  // One measurement that fails (a peer's server that does not come up, a driver that dies) is
  // reported and the run goes on: the other figures of the same run still stand side by side.
  const measure = async (system: System, what: string, take: () => Promise<BenchRow | undefined>) => {
    try {
      const row = await take();
      if (row) rows.push(row);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      failures.push(`${system.key} ${what} failed: ${message.split('\n')[0]}`);
      ctx.log(`peers: ${system.key} ${what} failed: ${message}`);
    }
  };
  try {
    for (const system of systems) {
      ctx.log(`peers: ${system.label}`);
      await measure(system, '(a)', () => latency(env, system));
      await measure(system, '(b)', () => throughput(env, system));
      await measure(system, '(c)', () => recovery(env, system));
      await measure(system, '(d) executor', () => duplicates(env, system, 'executor'));
      if (system.peer === 'restate') await measure(system, '(d) server', () => duplicates(env, system, 'server'));
      await measure(system, '(e)', () => memory(env, system));
      await measure(system, 'fsyncs', () => fsyncs(env, system));
    }
    const versions = rows
      .filter((r) => r.detail?.['measure'] === 'latency')
      .map((r) => `${String(r.detail!['system'])}: ${String(r.detail!['version'])}`);
    const failed = failures.length > 0 ? `; failed: ${failures.join('; ')}` : '';
    return { rows, note: `peers: ${versions.join('; ')}; sizes ${JSON.stringify(sizes)}${failed}` };
  } finally {
    await stub.close();
    await pg?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const only = process.env['PEERS_SYSTEMS']?.split(',');
  const result = await runPeersBench({
    quick: scenarioArgs('peers.bench').quick,
    log: (l) => console.error(l),
    ...(only ? { systems: only } : {}),
  });
  console.log(JSON.stringify(result, null, 1));
}
