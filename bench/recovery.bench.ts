// Scenario: verified recovery — supervisor boot to `serving` on a generated long history, with
// full replay (`recovery: 'full'`) and as the default boot does (every event verified, only the
// tails after checkpoints replayed), beside XState's step alone on as many workers as recovery
// uses (the parallel ceiling), with
// every check (digest chain, object digests — Task spec bodies also against their schema —, replay of every event through the Task
// statechart with its recorded disposition, projection comparison, identity). Also times the
// rebuild alone, on worker threads and on one thread, and the core commit's rebuildAll
// ("before"), all on the same root in the same run.
//
// tinybench, `iterations` timed runs per row after one untimed warm-up boot (page cache warm;
// the warm-up also writes the root's checkpoints once). Defaults: 3 runs up to 100k events and
// 2 runs at 1M; "before" runs once above 100k events (it takes minutes).
//
//   node dist/bench/recovery.bench.js [--quick]
import { pathToFileURL } from 'node:url';
import { OBJECT_KINDS } from '../objects/index.js';
import { rebuildParallel, rebuildAll } from '../recovery/index.js';
import { createSupervisor } from '../kernel/index.js';
import { EventStore } from '../store/index.js';
import { baselineRebuildAll } from './baseline-rebuild.js';
import { generateRoot } from './generate.js';
import { DEFAULT_BOOT, VERIFIED } from './report/headline.js';
import { ceilingWorkers, stepOnWorkers } from './step-workers.js';
import { benchSizes, type BenchContext, type BenchRow, type GivenHistory, type Size } from './report/results-model.js';
import { historyRow, scenarioArgs, timeIt, totalsRow, type Timing } from './util.js';

/** The row of the default boot (`recovery: 'checkpoint'`, docs/recovery-and-benchmarks.md). */
export { DEFAULT_BOOT };

/** Boots a supervisor on `root` and resolves with the milliseconds to `serving` (stop is not timed). */
export async function timedBoot(root: string, recovery: 'full' | 'checkpoint'): Promise<number> {
  const sup = createSupervisor({ state: root, recovery, purpose: 'bench' });
  const started = performance.now();
  await sup.start();
  const ms = performance.now() - started;
  await sup.stop();
  return ms;
}

/** Opens the root read-only, runs `fn`, closes; resolves with the milliseconds `fn` took (open and close not timed). */
export async function timedRebuild(
  root: string,
  fn: (store: EventStore) => Promise<{ findings: unknown[] }> | { findings: unknown[] },
): Promise<number> {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    const started = performance.now();
    const report = await fn(store);
    const ms = performance.now() - started;
    if (report.findings.length > 0)
      throw new Error(`the state root ${root} is not healthy: ${JSON.stringify(report.findings.slice(0, 3))}`);
    return ms;
  } finally {
    await store.close();
  }
}

/**
 * The recovery rows: per size, a generated history; with `history`, that history alone (a copy of
 * a user's state root), on which the core commit's rebuildAll ("before") is not run: it knew only
 * the shapes of its day, and the user's root is no comparison the generated workload gives.
 */
export async function runRecoveryBench(
  ctx: BenchContext & { sizes?: Size[]; baseline?: boolean; history?: GivenHistory },
): Promise<BenchRow[]> {
  if (ctx.history) {
    const { root, tasks, events } = ctx.history;
    ctx.log(
      `recovery: ${events.toLocaleString()} events of ${tasks.toLocaleString()} Tasks (copy of ${ctx.history.source})`,
    );
    return rootRows(root, events, ctx.quick, false, (name, t) => totalsRow('recovery', name, { tasks, events }, t));
  }
  const rows: BenchRow[] = [];
  for (const size of benchSizes(ctx)) {
    const events = size.tasks * size.events;
    const generated = await generateRoot({ ...size, onProgress: progress(ctx, 'lmdb', events) });
    ctx.log(
      `recovery: ${events.toLocaleString()} events (${generated.cached ? 'cached' : `generated in ${(generated.generateMs / 1000).toFixed(0)} s`})`,
    );
    rows.push(
      ...(await rootRows(generated.root, events, ctx.quick, ctx.baseline !== false, (name, t) =>
        historyRow('recovery', name, size, t),
      )),
    );
  }
  return rows;
}

/** Every recovery row of one root of `events` events: boot, the rebuild on workers and on one thread, and "before". */
async function rootRows(
  root: string,
  events: number,
  quick: boolean,
  baseline: boolean,
  row: (name: string, t: Timing) => BenchRow,
): Promise<BenchRow[]> {
  const iterations = quick || events >= 1_000_000 ? 2 : 3;
  const rows: BenchRow[] = [];
  await timedBoot(root, 'full'); // warm-up: page cache, JIT, checkpoints
  rows.push(row(VERIFIED, await timeIt('boot', () => timedBoot(root, 'full'), { iterations })));
  // The default boot on the checkpoints the full boots left at every head: every event verified, none replayed.
  rows.push(row(DEFAULT_BOOT, await timeIt('default boot', () => timedBoot(root, 'checkpoint'), { iterations })));
  const workers = ceilingWorkers();
  rows.push(
    row(
      `XState step alone on ${workers} workers (the parallel ceiling)`,
      await timeIt('step on workers', () => stepOnWorkers(root, workers), { iterations }),
    ),
  );
  rows.push(
    row(
      'rebuild only, worker threads (rebuildParallel)',
      await timeIt('parallel', () => timedRebuild(root, (store) => rebuildParallel(store)), { iterations }),
    ),
  );
  rows.push(
    row(
      'rebuild only, one thread (rebuildAll)',
      await timeIt('in-thread', () => timedRebuild(root, rebuildAll), {
        iterations: events >= 1_000_000 ? 1 : iterations,
      }),
    ),
  );
  if (baseline) {
    rows.push(
      row(
        'before: rebuildAll of the core commit (one thread)',
        await timeIt('baseline', () => timedRebuild(root, baselineRebuildAll), {
          iterations: events > 100_000 ? 1 : iterations,
        }),
      ),
    );
  }
  return rows;
}

export function progress(ctx: BenchContext, target: string, total: number): (done: number) => void {
  let last = performance.now();
  return (done) => {
    if (performance.now() - last > 10_000) {
      last = performance.now();
      ctx.log(`  generating ${target}: ${done.toLocaleString()} / ${total.toLocaleString()} events`);
    }
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runRecoveryBench({ quick: scenarioArgs('recovery.bench').quick, log: (l) => console.error(l) });
  console.table(
    rows.map((r) => ({ name: r.name, events: r.events, medianMs: r.medianMs.toFixed(0), iterations: r.iterations })),
  );
}
