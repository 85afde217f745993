// Scenario: Host recovery looks a Dispatch up by its exact clientRequestId (`findJobs`). The lookup
// must not get slower as the Runtime accumulates jobs. Loads 1,000 and 100,000 finished job records
// through `JobStore.insertUnchecked` (the same record + index writes `dispatch` makes, in batches of
// 10,000), then times `findJobs` for random known ids (hits) and unknown ids (misses) with tinybench.
// The load runs in a worker thread so its garbage is not collected inside the timed window; ids come
// from a seeded PRNG, so the timing thread regenerates them instead of receiving them.
//
//   node dist/bench/cluster/find-jobs.bench.js [--quick] [--json]
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, isMainThread, workerData } from 'node:worker_threads';
import { Bench } from 'tinybench';
import { JobStore, createRuntime, currentExecutor, type JobRecord, type Runtime } from '../../runtime/index.js';
import { machine, randomHex, seededRandom, scenarioArgs } from '../util.js';

export interface FindJobsRow {
  name: string;
  jobs: number;
  meanUs: number;
  p99Us: number;
  samples: number;
}

const BATCH = 10_000;

const SEED = 20_261_130;

/** The clientRequestIds of a load, in order; the same seed always gives the same ids. */
function requestIds(count: number, seed: number): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => `task-${randomHex(random, 32)}:attempt-1:gen-1:dispatch`);
}

function template(): Omit<JobRecord, 'jobId' | 'clientRequestId'> {
  const at = new Date().toISOString();
  const digest = 'sha256:' + '0'.repeat(64);
  const output = { bytes: 120, capturedBytes: 120, digest, truncated: false, tail: 'ok\n' };
  return {
    v: 1,
    workspace: '/var/lib/ordivon/workspaces/task/attempt-1',
    run: { kind: 'command', command: 'sh', args: ['-c', 'npm test'], envKeys: ['CI'] },
    timeoutMs: 600_000,
    graceMs: 2_000,
    executorId: 'bench-executor',
    executor: currentExecutor(),
    state: 'succeeded',
    createdAt: at,
    updatedAt: at,
    startedAt: at,
    endedAt: at,
    process: { pid: 4242, startTicks: 1 },
    exitCode: 0,
    signal: null,
    groupGone: true,
    stdout: output,
    stderr: output,
    files: { changed: [{ name: 'report.json', kind: 'file', bytes: 42, digest }], deleted: [], truncated: false },
  };
}

/** Writes `count` finished jobs (one per id of `requestIds(count, seed)`) into a fresh store. */
async function load(root: string, count: number, seed: number): Promise<void> {
  const store = JobStore.open(root);
  const base = template();
  const ids = requestIds(count, seed);
  const jobRandom = seededRandom(seed + 1);
  for (let start = 0; start < count; start += BATCH) {
    const batch: JobRecord[] = [];
    for (let i = start; i < Math.min(count, start + BATCH); i++) {
      const jobId = `job_${i.toString(36).padStart(9, '0')}_${randomHex(jobRandom, 16)}`;
      batch.push({ ...base, jobId, clientRequestId: ids[i]! });
    }
    store.insertUnchecked(batch);
  }
  await store.close();
}

async function loadInWorker(root: string, count: number, seed: number): Promise<void> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { role: 'find-jobs-loader', root, count, seed } });
  const [code] = (await once(worker, 'exit')) as [number];
  if (code !== 0) throw new Error(`the loader worker exited with code ${code}`);
}

interface Setup {
  jobs: number;
  dir: string;
  ids: string[];
  runtime: Runtime;
}

async function setUp(jobs: number, quick: boolean): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'ordivon-bench-find-jobs-'));
  await loadInWorker(dir, jobs, SEED);
  const ids = requestIds(jobs, SEED);
  const runtime = await createRuntime({ root: dir });
  // Full mode looks every id up once first: it checks the load (one job per id) and maps every page,
  // so both sizes are measured warm; quick mode checks a few ids and measures what it gets.
  for (const id of quick ? ids.slice(0, 10) : ids) {
    const found = await runtime.findJobs({ clientRequestId: id });
    if (found.length !== 1) throw new Error(`expected one job for ${id}, found ${found.length}`);
  }
  return { jobs, dir, ids, runtime };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

/**
 * Runs the scenario and returns one row per (size, hit/miss). Both sizes are timed in alternating
 * rounds and their samples pooled, so drifting load on a shared machine hits both alike. `quick`
 * shortens the rounds and skips the warm-up pass.
 */
export async function runFindJobsBench(opts: { quick: boolean }): Promise<FindJobsRow[]> {
  const setups: Setup[] = [];
  try {
    for (const jobs of [1_000, 100_000]) setups.push(await setUp(jobs, opts.quick));
    const rounds = opts.quick ? 2 : 6;
    const samples = new Map<string, number[]>();
    for (let round = 0; round < rounds; round++) {
      for (const { jobs, ids, runtime } of round % 2 === 0 ? setups : [...setups].reverse()) {
        const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
        const bench = new Bench({ time: opts.quick ? 200 : 500, warmupTime: 100, retainSamples: true });
        bench.add('findJobs hit', async () => {
          await runtime.findJobs({ clientRequestId: pick() });
        });
        bench.add('findJobs miss', async () => {
          await runtime.findJobs({ clientRequestId: `task-${randomUUID()}` });
        });
        await bench.run();
        for (const task of bench.tasks) {
          const result = task.result;
          if (result.state !== 'completed') throw new Error(`${task.name} (${jobs}): ${result.state}`);
          const key = `${task.name}|${jobs}`;
          samples.set(key, [...(samples.get(key) ?? []), ...(result.latency.samples ?? [])]);
        }
      }
    }
    return [...samples].map(([key, ms]) => {
      const [name = key, jobs = '0'] = key.split('|');
      const sorted = [...ms].sort((a, b) => a - b);
      const mean = sorted.reduce((sum, x) => sum + x, 0) / sorted.length;
      return {
        name,
        jobs: Number(jobs),
        meanUs: mean * 1_000,
        p99Us: percentile(sorted, 0.99) * 1_000,
        samples: sorted.length,
      };
    });
  } finally {
    for (const { runtime, dir } of setups) {
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

const loader = workerData as { role?: string; root: string; count: number; seed: number } | null;
if (!isMainThread && loader?.role === 'find-jobs-loader') {
  await load(loader.root, loader.count, loader.seed);
} else if (isMainThread && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = scenarioArgs('cluster/find-jobs.bench', process.argv.slice(2), true);
  const rows = await runFindJobsBench({ quick: args.quick });
  console.log(JSON.stringify({ machine: machine(), loadavg1m: loadavg()[0] }));
  console.table(rows.map((r) => ({ ...r, meanUs: r.meanUs.toFixed(2), p99Us: r.p99Us.toFixed(2) })));
  for (const name of new Set(rows.map((r) => r.name))) {
    const small = rows.find((r) => r.name === name && r.jobs === 1_000);
    const large = rows.find((r) => r.name === name && r.jobs === 100_000);
    if (small && large) console.log(`${name}: mean 100k / 1k = ${(large.meanUs / small.meanUs).toFixed(2)}×`);
  }
  if (args.json) console.log(JSON.stringify(rows));
}
