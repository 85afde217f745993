// Long-history generator: writes N Tasks × M events through the real kernel (TaskActor → zod
// input → statechart → revision-CAS append with objects, blobs, identity claims and projection).
//
//   node dist/bench/generate.js --tasks 10000 --events 100 [--seed 7] [--target lmdb|sqlite] [--fresh]
//
// Speed: events are written in rounds — round r sends event r of every Task — and up to
// WAVE Tasks' sends are issued in the same tick without awaiting each other. lmdb-js queues
// their child transactions into one write transaction and one sync, so a wave costs one
// durable commit instead of thousands (the SQLite peer groups a tick's appends the same way).
// Interleaved arrival is also what a busy Host produces, so the B-tree has a realistic shape.
//
// Generated roots are cached under ORDIVON_BENCH_CACHE (default <tmpdir>/ordivon-bench-cache),
// keyed by target, size, seed and workload version; a root is used only once complete.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { initialTransition } from 'xstate';
import { z } from 'zod';
import { manualClock, TaskActor } from '../kernel/index.js';
import { OBJECT_KINDS } from '../objects/index.js';
import { taskMachine } from '../machines/index.js';
import { EventStore } from '../store/index.js';
import { scriptArgsOrExit } from '../cli/cli-io.js';
import { seededRandom } from './util.js';
import { benchTaskId, materialize, planTask, type StepKind } from './workload.js';

/**
 * Bump when the workload's shape changes — or the Task machine's version, whose projections the
 * roots hold — so cached roots of the old shape are not reused.
 * 2: objects stored as canonical JSON bytes (LMDB) / text (SQLite).
 * 3: Task machine version 2 (a Task's context counts its rejections and keeps the latest only).
 * 4: workload-neutral names and artifact contracts with an explicit kind.
 */
export const WORKLOAD_VERSION = 4;
const WAVE = 10_000;

export type Target = 'lmdb' | 'sqlite';

export interface GenerateOptions {
  tasks: number;
  /** Events per Task. */
  events: number;
  seed?: number;
  target?: Target;
  /** Cache directory; default ORDIVON_BENCH_CACHE or <tmpdir>/ordivon-bench-cache. */
  cacheDir?: string;
  /** Regenerate even when a complete cached root exists. */
  fresh?: boolean;
  onProgress?: (done: number, total: number) => void;
}

export interface GeneratedRoot {
  /** The state root (lmdb) or the directory holding `peer.sqlite` (sqlite). */
  root: string;
  target: Target;
  tasks: number;
  events: number;
  seed: number;
  cached: boolean;
  generateMs: number;
}

const Marker = z.object({
  workloadVersion: z.number(),
  tasks: z.number(),
  events: z.number(),
  seed: z.number(),
  generateMs: z.number(),
});

export function cacheDirectory(explicit?: string): string {
  return explicit ?? process.env.ORDIVON_BENCH_CACHE ?? join(tmpdir(), 'ordivon-bench-cache');
}

/** Returns a complete generated root for the parameters, generating it unless cached. */
export async function generateRoot(options: GenerateOptions): Promise<GeneratedRoot> {
  const target = options.target ?? 'lmdb';
  const seed = options.seed ?? 7;
  const { tasks, events } = options;
  if (!Number.isInteger(tasks) || tasks < 1 || !Number.isInteger(events) || events < 1)
    throw new Error(`tasks and events must be positive integers (got ${tasks} × ${events})`);
  const cache = cacheDirectory(options.cacheDir);
  const root = join(cache, `${target}-t${tasks}-e${events}-s${seed}-w${WORKLOAD_VERSION}`);
  const markerPath = join(root, 'generated.json');
  if (!options.fresh && existsSync(markerPath)) {
    const marker = Marker.safeParse(JSON.parse(readFileSync(markerPath, 'utf8')));
    if (marker.success && marker.data.workloadVersion === WORKLOAD_VERSION) {
      return { root, target, tasks, events, seed, cached: true, generateMs: marker.data.generateMs };
    }
  }
  const partial = `${root}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const started = performance.now();
  try {
    if (target === 'lmdb') {
      const store = EventStore.open({ root: partial, kinds: OBJECT_KINDS, purpose: 'bench generator' });
      try {
        await writeWorkload(store, tasks, events, seed, options.onProgress);
      } finally {
        await store.close();
      }
    } else {
      // better-sqlite3 is a devDependency: only the SQLite target loads it, so an installed
      // package generates LMDB histories without it.
      const { SqlitePeerStore, asKernelStore } = await import('./peers/sqlite-peer-store.js');
      const store = SqlitePeerStore.open(join(partial, 'peer.sqlite'));
      try {
        await writeWorkload(asKernelStore(store), tasks, events, seed, options.onProgress);
      } finally {
        store.close();
      }
    }
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
  const generateMs = performance.now() - started;
  writeFileSync(
    join(partial, 'generated.json'),
    JSON.stringify({ workloadVersion: WORKLOAD_VERSION, tasks, events, seed, generateMs }),
  );
  rmSync(root, { recursive: true, force: true });
  renameSync(partial, root);
  return { root, target, tasks, events, seed, cached: false, generateMs };
}

const EXPECTED: Partial<Record<StepKind, string>> = {
  proposeStale: 'stale_assignment',
  proposeMissing: 'missing_artifact',
};

/**
 * Drives `tasks` kernels through their planned walks, round by round, through the real TaskActor.
 * Fails if the kernel takes any event otherwise than planned (a workload bug, not a store one).
 */
export async function writeWorkload(
  store: EventStore,
  tasks: number,
  events: number,
  seed: number,
  onProgress?: (done: number, total: number) => void,
): Promise<void> {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const [initial] = initialTransition(taskMachine);
  const actors: TaskActor[] = [];
  const plans: StepKind[][] = [];
  const randoms: Array<() => number> = [];
  for (let i = 0; i < tasks; i++) {
    const taskId = benchTaskId(i);
    actors.push(new TaskActor({ taskId, snapshot: initial, revision: 0, store, clock, onCommit: () => {} }));
    plans.push(planTask(i, events, seed));
    randoms.push(seededRandom(seed * 7_919 + i * 104_729 + 1));
  }
  try {
    for (let round = 0; round < events; round++) {
      clock.advance(1_000);
      for (let start = 0; start < tasks; start += WAVE) {
        const sends: Array<Promise<void>> = [];
        for (let i = start; i < Math.min(tasks, start + WAVE); i++) {
          const kind = plans[i]![round];
          if (kind === undefined) continue;
          const actor = actors[i]!;
          const step = materialize(kind, actor.taskId, actor.context, randoms[i]!);
          sends.push(
            actor.send(step.event, step.origin, step.attachments).then((result) => {
              const expected = EXPECTED[kind];
              if (!result.written || (expected ? result.code !== expected : !result.admitted)) {
                throw new Error(`workload: ${actor.taskId} round ${round} ${kind} was taken ${JSON.stringify(result)}`);
              }
            }),
          );
        }
        await Promise.all(sends);
      }
      onProgress?.((round + 1) * tasks, events * tasks);
    }
  } finally {
    for (const actor of actors) actor.stop();
  }
}

const USAGE =
  'usage: node dist/bench/generate.js [--tasks N] [--events N] [--seed N] [--target lmdb|sqlite] [--fresh]  (N: positive integers)';
const GenerateArgs = z.object({
  tasks: z.coerce.number().int().positive().max(10_000_000),
  events: z.coerce.number().int().positive().max(100_000),
  seed: z.coerce.number().int().positive(),
  target: z.enum(['lmdb', 'sqlite']),
  fresh: z.boolean().default(false),
  help: z.boolean().default(false),
});

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { tasks, events, seed, target, fresh } = scriptArgsOrExit(
    'generate',
    USAGE,
    process.argv.slice(2),
    {
      tasks: { type: 'string', default: '10000' },
      events: { type: 'string', default: '100' },
      seed: { type: 'string', default: '7' },
      target: { type: 'string', default: 'lmdb' },
      fresh: { type: 'boolean' },
    },
    GenerateArgs,
  );
  let last = 0;
  const result = await generateRoot({
    tasks,
    events,
    seed,
    target,
    fresh,
    onProgress: (done, total) => {
      if (performance.now() - last > 5_000) {
        last = performance.now();
        console.error(`  ${target}: ${done.toLocaleString()} / ${total.toLocaleString()} events`);
      }
    },
  });
  console.log(JSON.stringify(result));
}
