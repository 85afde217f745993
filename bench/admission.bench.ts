// Scenario: admission — admitted transitions per second with durable commits, for 1, 16 and 256
// concurrently active Tasks. Each Task loops through the Host's real cycle (Assignment from
// outside through `Supervisor.send`; Context compile, dispatch intent, acknowledgement, run
// observation with artifact evidence and settle as Host events), one transition at a time per
// Task (its mailbox), all Tasks at once. Every send resolves only after its commit is durable.
//
// Three rows per concurrency: the supervisor on LMDB; the kernel (TaskActor) on LMDB; the same
// kernel on the SQLite peer (WAL, synchronous FULL, appends of one tick in one transaction).
// tinybench, 3 timed runs per row, each on a fresh state root prepared outside the timed window.
// Each row also carries what a transition cost over the timed window (medians of the runs): the
// main thread's CPU (its own clock) and the whole process's (every thread), the bytes and write
// calls the process made (/proc/self/io), and for the kernel on LMDB the commits LMDB made.
//
//   node dist/bench/admission.bench.js [--quick]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { initialTransition } from 'xstate';
import type { RootDatabase } from 'lmdb';
import { systemClock, createSupervisor, type Supervisor, TaskActor, type SendResult } from '../kernel/index.js';
import { readProcIo, threadCpuNs } from '../os/index.js';
import { OBJECT_KINDS } from '../objects/index.js';
import { taskMachine, type TaskMachineContext } from '../machines/index.js';
import { EventStore } from '../store/index.js';
import type { BenchContext, BenchRow } from './report/results-model.js';
import { SqlitePeerStore, asKernelStore } from './peers/sqlite-peer-store.js';
import { scenarioArgs, seededRandom, timeIt } from './util.js';
import { BENCH_SPEC, benchTaskId, materialize, type Step, type StepKind } from './workload.js';

/** One Host cycle of a Task: six admitted transitions. */
export const CYCLE: StepKind[] = ['assign', 'compile', 'intend', 'ack', 'observe', 'settle'];

export interface Driven {
  taskId: string;
  context(): TaskMachineContext;
  send(step: Step): Promise<SendResult>;
}

/**
 * Runs `cycles` Host cycles on every Task concurrently; resolves with the number of admitted
 * transitions. Task i draws its random bytes from seed `firstSeed + i`: Hosts sharing one history
 * pass distinct ranges, so no two Tasks write the same artifact bytes.
 */
export async function drive(tasks: Driven[], cycles: number, firstSeed = 9_973): Promise<number> {
  let admitted = 0;
  await Promise.all(
    tasks.map(async (task, i) => {
      const random = seededRandom(firstSeed + i);
      for (let c = 0; c < cycles; c++) {
        for (const kind of CYCLE) {
          const result = await task.send(materialize(kind, task.taskId, task.context(), random));
          if (!result.admitted) throw new Error(`admission: ${task.taskId} ${kind} refused ${JSON.stringify(result)}`);
          admitted++;
        }
      }
    }),
  );
  return admitted;
}

/** Creates a bench Task on a serving Supervisor and drives it as the Host would: Assignments through `send`, Host events on its actor. */
export async function createDriven(sup: Supervisor, taskId: string): Promise<Driven> {
  await sup.createTask(BENCH_SPEC(taskId));
  const actor = sup.taskActor(taskId)!;
  return {
    taskId,
    context: () => actor.context,
    send: (step) =>
      step.origin === 'external' ? sup.sendRaw(taskId, step.event) : actor.send(step.event, 'host', step.attachments),
  };
}

export type Target = 'supervisor' | 'kernel-lmdb' | 'kernel-sqlite';

export interface Prepared {
  tasks: Driven[];
  /** The LMDB environment the kernel writes, where the bench holds it (not the Supervisor's). */
  env?: RootDatabase;
  close(): Promise<void>;
}

/** Counters read before and after a timed window; a field is absent where it cannot be read. */
export interface CostSample {
  mainCpuNs?: number;
  processCpuUs: number;
  writeCallBytes?: number;
  writeCalls?: number;
  storageWriteBytes?: number;
  commits?: number;
  pageSize?: number;
}

export function sampleCost(env: RootDatabase | undefined): CostSample {
  const io = readProcIo();
  const cpu = process.cpuUsage();
  const stats = env?.getStats() as { lastTxnId: number; pageSize: number } | undefined;
  return {
    mainCpuNs: threadCpuNs(),
    processCpuUs: cpu.user + cpu.system,
    writeCallBytes: io?.writeCallBytes,
    writeCalls: io?.writeCalls,
    storageWriteBytes: io?.storageWriteBytes,
    commits: stats?.lastTxnId,
    pageSize: stats?.pageSize,
  };
}

/** What one transition cost between two samples, per field both hold. */
export function costPerTransition(before: CostSample, after: CostSample, transitions: number): Record<string, number> {
  const out: Record<string, number> = {};
  const per = (key: string, a: number | undefined, b: number | undefined, scale = 1) => {
    if (a !== undefined && b !== undefined) out[key] = ((b - a) * scale) / transitions;
  };
  per('mainCpuUsPerTransition', before.mainCpuNs, after.mainCpuNs, 1 / 1000);
  per('processCpuUsPerTransition', before.processCpuUs, after.processCpuUs);
  per('writeBytesPerTransition', before.writeCallBytes, after.writeCallBytes);
  per('writeCallsPerTransition', before.writeCalls, after.writeCalls);
  per('storageBytesPerTransition', before.storageWriteBytes, after.storageWriteBytes);
  per('commitsPerTransition', before.commits, after.commits);
  // LMDB writes whole pages (and a meta record per commit): the written bytes in pages.
  if (out.writeBytesPerTransition !== undefined && after.pageSize !== undefined)
    out.pagesPerTransition = out.writeBytesPerTransition / after.pageSize;
  return out;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The median of each per-transition figure over the runs that measured it. */
function medianCosts(runs: Record<string, number>[]): Record<string, number> {
  const keys = new Set(runs.flatMap((r) => Object.keys(r)));
  const out: Record<string, number> = {};
  for (const key of keys) {
    const values = runs.map((r) => r[key]).filter((v): v is number => v !== undefined);
    out[key] = Number(median(values).toFixed(key.startsWith('pages') || key.startsWith('commits') ? 3 : 1));
  }
  return out;
}

export async function prepare(target: Target, count: number): Promise<Prepared> {
  const dir = mkdtempSync(join(tmpdir(), 'ordivon-bench-admission-'));
  const clean = () => rmSync(dir, { recursive: true, force: true });
  if (target === 'supervisor') {
    const sup: Supervisor = createSupervisor({ state: dir, purpose: 'bench admission' });
    await sup.start();
    const tasks: Driven[] = [];
    for (let i = 0; i < count; i++) tasks.push(await createDriven(sup, benchTaskId(i)));
    return { tasks, close: async () => (await sup.stop(), clean()) };
  }
  const lmdb =
    target === 'kernel-lmdb'
      ? EventStore.open({ root: dir, kinds: OBJECT_KINDS, purpose: 'bench admission' })
      : undefined;
  const peer = target === 'kernel-sqlite' ? SqlitePeerStore.open(join(dir, 'peer.sqlite')) : undefined;
  const store = lmdb ?? asKernelStore(peer!);
  const [initial] = initialTransition(taskMachine);
  const actors = Array.from(
    { length: count },
    (_, i) =>
      new TaskActor({
        taskId: benchTaskId(i),
        snapshot: initial,
        revision: 0,
        store,
        clock: systemClock,
        onCommit: () => {},
      }),
  );
  const tasks: Driven[] = actors.map((actor) => ({
    taskId: actor.taskId,
    context: () => actor.context,
    send: (step) => actor.send(step.event, step.origin, step.attachments),
  }));
  await Promise.all(tasks.map((t) => t.send(materialize('created', t.taskId, t.context(), seededRandom(1)))));
  return {
    tasks,
    env: lmdb?.databases.env,
    close: async () => {
      for (const actor of actors) actor.stop();
      await lmdb?.close();
      peer?.close();
      clean();
    },
  };
}

const LABEL: Record<Target, string> = {
  supervisor: 'admission: Supervisor.send / Host events, LMDB',
  'kernel-lmdb': 'admission: kernel (TaskActor), LMDB',
  'kernel-sqlite': 'admission: kernel (TaskActor), SQLite peer',
};

/** Host cycles per Task for about the same number of transitions per run at every concurrency. */
export function admissionCycles(quick: boolean, concurrency: number): number {
  // 12,000 transitions (was 3,000, a window of ~0.17 s at 256 Tasks on a fast disk — too short to be steady).
  return Math.max(2, Math.round((quick ? 600 : 12_000) / (concurrency * CYCLE.length)));
}

export async function runAdmissionBench(ctx: BenchContext): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const concurrency of [1, 16, 256]) {
    const cycles = admissionCycles(ctx.quick, concurrency);
    for (const target of ['supervisor', 'kernel-lmdb', 'kernel-sqlite'] as const) {
      let prepared: Prepared | undefined;
      let admitted = 0;
      const costs: Record<string, number>[] = [];
      const t = await timeIt(
        `${target} ${concurrency}`,
        async () => {
          const before = sampleCost(prepared!.env);
          const started = performance.now();
          admitted = await drive(prepared!.tasks, cycles);
          const ms = performance.now() - started;
          costs.push(costPerTransition(before, sampleCost(prepared!.env), admitted));
          return ms;
        },
        {
          iterations: ctx.quick ? 2 : 3,
          prepare: async () => void (prepared = await prepare(target, concurrency)),
          cleanup: async () => void (await prepared?.close()),
        },
      );
      rows.push({
        scenario: 'admission',
        name: LABEL[target],
        tasks: concurrency,
        ...t,
        rate: admitted / (t.medianMs / 1000),
        rateUnit: 'transitions/s',
        detail: { concurrency, transitions: admitted, durable: true, ...medianCosts(costs) },
      });
      const cost = medianCosts(costs);
      ctx.log(
        `admission: ${target} × ${concurrency}: ${(admitted / (t.medianMs / 1000)).toFixed(0)} transitions/s; per transition: main thread ${cost.mainCpuUsPerTransition ?? '?'} µs CPU, process ${cost.processCpuUsPerTransition ?? '?'} µs, ${cost.writeBytesPerTransition ?? '?'} B written${cost.pagesPerTransition !== undefined ? ` (${cost.pagesPerTransition} pages, ${cost.commitsPerTransition} commits)` : ''}`,
      );
    }
  }
  return rows;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runAdmissionBench({ quick: scenarioArgs('admission.bench').quick, log: (l) => console.error(l) });
  console.table(
    rows.map((r) => ({
      name: r.name,
      tasks: r.tasks,
      rate: r.rate?.toFixed(0),
      medianMs: r.medianMs.toFixed(0),
      mainCpuUs: r.detail?.mainCpuUsPerTransition,
      bytes: r.detail?.writeBytesPerTransition,
      pages: r.detail?.pagesPerTransition,
    })),
  );
}
