import { availableParallelism } from 'node:os';
import { OBJECT_KINDS } from '../objects/index.js';
import type { EventStore } from '../store/index.js';
import {
  checkpointIdentityFindings,
  rebuiltFrom,
  recoverFromCheckpoints,
  type CheckpointRecoveryReport,
} from './checkpoint.js';
import { checkpointedTasks, type CheckpointedTask } from './checkpointed-tasks.js';
import { identityFindings } from './identity-findings.js';
import { defaultWorkers, idleCores } from './idle-cores.js';
import { ProgressMeter, progressSum, type ProgressListener } from './progress.js';
import { readHeads } from './read-heads.js';
import {
  headWeights,
  rebuildAll,
  sortById,
  type HeadWeight,
  type RebuiltTask,
  type RecoveryReport,
} from './rebuild.js';
import { RecoveryWorkerError, WarmWorkers, runWorker, type Part } from './run-worker.js';
import { lmdbVerifySource } from './source.js';
import { RecoveryVerifier, type StartCounts } from './verifier.js';

export interface ParallelOptions {
  /**
   * Worker threads; default the machine's available parallelism (at most 8) when at least one
   * core is idle now (`idleCores`), else none. Workers pay only with idle cores: on this 2-core
   * VM at load 8–10 two workers took 1.3–2.8× longer than one thread, using ~60% more CPU (each
   * worker loads, JIT-compiles and collects on its own).
   */
  workers?: number;
  /**
   * How many cores are idle now; default `idleCores()`, a 50 ms sample of the machine's idle
   * time plus this process's own, taken twice when the first finds no idle core. (The 1-minute load average, used before, counts this process's own work of the last
   * minute: a Host that had been busy, or a benchmark, got no workers on an otherwise idle machine.)
   */
  idleCores?: () => Promise<number>;
  /**
   * Histories shorter than this many events (default 250,000) are verified on the calling thread
   * (for a checkpointed start: the events its tails are projected to need). A worker pays only
   * after loading its modules and running its first Tasks cold: on the AMD VM of 2026-12-01 that
   * was ~0.6 s plus ~0.85 s, and 100k events took 2.2-2.5 s on two workers vs 1.8-2.2 s on one
   * thread (1M: 14.4-15.9 s vs ~22 s); on the Xeon VM loading takes 0.11-0.15 s and two workers
   * over 10,000 events took ~0.4 s more than one thread.
   */
  inThreadBelow?: number;
  /** Young-generation size of each worker (MB): replay allocates many short-lived objects; a larger nursery cuts GC time. */
  youngGenerationMb?: number;
  /** Also check every object body against its kind's schema (see `VerifierOptions.bodies`). */
  bodies?: boolean;
  /** Trust checkpoints: replay only the tails after those the verified chain matches (`RebuildOptions.checkpoints`). */
  checkpoints?: boolean;
  /** Running counts while it works, summed over the threads (see `RecoveryProgress`). */
  onProgress?: ProgressListener;
}

/**
 * `rebuildAll` split over worker threads: the Task id space is cut into contiguous ranges of
 * about equal event count (from the heads), each worker verifies its range from its own
 * read-only LMDB handle, and the calling thread turns the returned persisted snapshots into live
 * machine snapshots while the workers go on. Same checks, same finding codes and names; findings
 * come in range order, i.e. Task order.
 *
 * Falls back to `rebuildAll` on the calling thread for short histories, one usable core, or a
 * worker that cannot run (reported as `failed`, e.g. a missing build file). Rejects only if
 * that fallback throws.
 */
export async function rebuildParallel(store: EventStore, options: ParallelOptions = {}): Promise<ParallelReport> {
  // Workers are started first, so they load while the heads are read and the idle cores sampled;
  // only when the history (LMDB's O(1) entry count) is long enough for them to be used at all.
  const youngGenerationMb = options.youngGenerationMb ?? 64;
  const inThreadBelow = options.inThreadBelow ?? 250_000;
  const wanted = options.workers ?? Math.min(availableParallelism(), 8);
  const warm =
    wanted >= 2 && eventCount(store) >= inThreadBelow ? new WarmWorkers(wanted, youngGenerationMb) : undefined;
  try {
    return await rebuildOn(store, options, warm);
  } finally {
    await warm?.close();
  }
}

async function rebuildOn(
  store: EventStore,
  options: ParallelOptions,
  warm: WarmWorkers | undefined,
): Promise<ParallelReport> {
  const weights = headWeights(store);
  const { onProgress } = options;
  const totals = { totalTasks: weights.length, totalEvents: sum(weights.map((w) => w.events)) };
  const inThread = (): ParallelReport => ({
    ...rebuildAll(
      store,
      {
        bodies: options.bodies ?? false,
        checkpoints: options.checkpoints ?? false,
        ...(onProgress ? { onProgress } : {}),
      },
      totals,
    ),
    workers: 0,
  });
  const ranges = await plan(weights, totals.totalEvents, options);
  if (!ranges) return inThread();
  const progress = onProgress ? progressSum(onProgress, totals) : undefined;
  try {
    const parts = await Promise.all(
      ranges.map((range, i) =>
        runWorker(
          store.root,
          range,
          { mode: 'full', bodies: options.bodies ?? false, checkpoints: options.checkpoints ?? false },
          options.youngGenerationMb ?? 64,
          progress && ((count) => progress(i, count)),
          warm?.take(),
        ),
      ),
    );
    const tasks = sortById(parts.flatMap((p) => p.tasks));
    const requestOwners = mergeRequests(parts);
    const findings = [
      ...parts.flatMap((p) => p.findings),
      ...identityFindings(requestOwners, (kind) => store.indexEntries(kind)),
    ];
    return {
      tasks,
      findings,
      events: sum(parts.map((p) => p.events)),
      objects: sum(parts.map((p) => p.objects)),
      replayed: sum(parts.map((p) => p.replayed)),
      ...(options.checkpoints ? { starts: sumStarts(parts.map((p) => p.starts)) } : {}),
      workers: parts.length,
    };
  } catch (error) {
    if (workerUnavailable(error)) return inThread();
    throw error;
  }
}

/**
 * A checkpointed start (`recoverFromCheckpoints`) with long tails split over worker threads —
 * after a crash, up to `checkpointEvery` events per Task. The calling thread starts the work
 * itself: it verifies the first `PROBE_TASKS` Tasks (in id order), projects from the events they
 * needed how many the rest will, and when that reaches `inThreadBelow` hands the rest to workers
 * in ranges of equal Task count; otherwise it goes on alone. Either way no Task is read twice,
 * the identity claims are read here, and the report — findings in the same order — is the one
 * `recoverFromCheckpoints` gives.
 *
 * Stays on the calling thread when the history's ends are not counted (a damaged root: the
 * probes and the walk for streams without a head are the calling thread's), with one usable
 * core, or when a worker cannot run.
 */
export async function recoverFromCheckpointsParallel(
  store: EventStore,
  options: Omit<ParallelOptions, 'bodies'> & {
    /** Tasks verified on the calling thread before it decides (default 256). */
    probeTasks?: number;
  } = {},
): Promise<CheckpointRecoveryReport & { workers: number }> {
  const read = readHeads(store);
  if (!read.counted) return { ...recoverFromCheckpoints(store, read, options.onProgress), workers: 0 };
  const verifier = new RecoveryVerifier(lmdbVerifySource(store), OBJECT_KINDS);
  const tasks: RebuiltTask[] = [];
  const accept = (task: CheckpointedTask) => tasks.push(rebuiltFrom(task));
  const probe = read.heads.slice(0, options.probeTasks ?? PROBE_TASKS);
  const rest = read.heads.slice(probe.length);
  // Part 0 is this thread's count (the probe, and the rest when no worker takes it); 1.. the workers'.
  const progress = options.onProgress ? progressSum(options.onProgress, { totalTasks: read.heads.length }) : undefined;
  const meter = progress ? new ProgressMeter((count) => progress(0, count)) : undefined;
  const done = [checkpointedTasks(store, verifier, probe, true, true, accept, meter)];
  meter?.flush();
  const projected = probe.length > 0 ? (verifier.events / probe.length) * rest.length : 0;
  const count =
    rest.length > 0 && projected >= (options.inThreadBelow ?? 250_000) ? await workerCount(rest.length, options) : 0;
  let parts: Part[] = [];
  if (count > 0) {
    const ranges = Array.from({ length: count }, (_, i) => ({
      from: rest[Math.floor((i * rest.length) / count)]!.taskId,
      to: i + 1 < count ? rest[Math.floor(((i + 1) * rest.length) / count)]!.taskId : undefined,
    }));
    try {
      parts = await Promise.all(
        ranges.map((range, i) =>
          runWorker(
            store.root,
            range,
            { mode: 'checkpoint', bodies: false },
            options.youngGenerationMb ?? 64,
            progress && ((count) => progress(i + 1, count)),
          ),
        ),
      );
    } catch (error) {
      if (!workerUnavailable(error)) throw error;
      parts = [];
    }
  }
  if (parts.length === 0 && rest.length > 0) {
    done.push(checkpointedTasks(store, verifier, rest, true, true, accept, meter));
    meter?.flush();
  }
  const counts = [
    ...done,
    ...parts.map((p) => p.checkpoint ?? { trusted: 0, tailReplayed: 0, fullReplayed: 0, stale: [] }),
  ];
  const requestOwners = mergeRequests([
    { requests: [...verifier.requestOwners].map(([id, owners]) => [id, [...owners]]) },
    ...parts,
  ]);
  return {
    tasks: sortById([...tasks, ...parts.flatMap((p) => p.tasks)]),
    findings: [
      ...verifier.findings,
      ...parts.flatMap((p) => p.findings),
      ...checkpointIdentityFindings(store, requestOwners),
    ],
    events: verifier.events + sum(parts.map((p) => p.events)),
    objects: verifier.objectCount + sum(parts.map((p) => p.objects)),
    trusted: sum(counts.map((c) => c.trusted)),
    tailReplayed: sum(counts.map((c) => c.tailReplayed)),
    fullReplayed: sum(counts.map((c) => c.fullReplayed)),
    stale: counts.flatMap((c) => c.stale),
    ends: 'counted',
    workers: parts.length,
  };
}

/** Tasks the calling thread verifies before it decides whether the rest of a checkpointed start goes to workers. */
const PROBE_TASKS = 256;

/**
 * Task-id ranges of about equal weight, one per worker; undefined when the work (`events` to
 * replay) is below `inThreadBelow` or fewer than two workers would run (one only when asked for).
 */
async function plan(
  weights: HeadWeight[],
  events: number,
  options: ParallelOptions,
): Promise<Array<{ from: string | undefined; to: string | undefined }> | undefined> {
  if (events < (options.inThreadBelow ?? 250_000)) return undefined;
  const count = await workerCount(weights.length, options);
  if (count === 0) return undefined;
  const total = sum(weights.map((w) => w.events));
  const bounds: Array<string | undefined> = [undefined];
  let seen = 0;
  for (const { taskId, events: weight } of weights) {
    if (seen >= (total * bounds.length) / count && bounds.length < count) bounds.push(taskId);
    seen += weight;
  }
  bounds.push(undefined);
  return bounds.slice(0, -1).map((from, i) => ({ from, to: bounds[i + 1] }));
}

/** Workers to use for `tasks` Tasks: 0 for the calling thread (one worker is never faster, unless asked for explicitly, to measure it). */
async function workerCount(tasks: number, options: ParallelOptions): Promise<number> {
  const count = Math.min(options.workers ?? (await defaultWorkers(options.idleCores ?? idleCores)), tasks);
  return count < 1 || (count === 1 && options.workers === undefined) ? 0 : count;
}

function mergeRequests(parts: Array<Pick<Part, 'requests'>>): Map<string, Set<string>> {
  const requestOwners = new Map<string, Set<string>>();
  for (const part of parts)
    for (const [id, owners] of part.requests)
      for (const owner of owners) (requestOwners.get(id) ?? requestOwners.set(id, new Set()).get(id)!).add(owner);
  return requestOwners;
}

/** The report of `rebuildAll`, plus how many worker threads did the work (0: the calling thread). */
export interface ParallelReport extends RecoveryReport {
  workers: number;
}

function sumStarts(parts: Array<StartCounts | undefined>): StartCounts {
  const out: StartCounts = { trusted: 0, tailReplayed: 0, fullReplayed: 0, codeChanged: 0, headMismatch: 0 };
  for (const part of parts)
    if (part) for (const key of Object.keys(out) as Array<keyof StartCounts>) out[key] += part[key];
  return out;
}

/** The events database's entry count; 0 when it cannot be read (no warm workers then). */
function eventCount(store: EventStore): number {
  try {
    return store.eventCount();
  } catch {
    return 0;
  }
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** A worker that could not run: the calling thread does its work instead. */
function workerUnavailable(error: unknown): boolean {
  return error instanceof RecoveryWorkerError && error.code === 'worker_unavailable';
}
