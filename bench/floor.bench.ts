// Scenario: the physical floor of recovery — open the store and range-scan the same bytes with
// lmdb's decoding, and nothing else: no parsing, hashing, replay or comparison. Two floors:
// the events alone (what issue 7's 2.45 s prototype figure measured), and every database the
// verified path reads (events, objects, artifact blobs, heads, projections).
//
// tinybench, 3 timed runs per row (5 up to 100k events) after the recovery scenario warmed the
// page cache.
//
//   node dist/bench/floor.bench.js [--quick]
import { pathToFileURL } from 'node:url';
import { OBJECT_KINDS } from '../objects/index.js';
import { EventStore } from '../store/index.js';
import { generateRoot } from './generate.js';
import { progress } from './recovery.bench.js';
import { FULL_SIZES, QUICK_SIZES, type BenchContext, type BenchRow, type Size } from './results-model.js';
import { scenarioArgs, timeIt } from './util.js';

/** Opens the root and scans `which` databases, decoding every value; resolves with the ms taken and the values read. */
export async function scanFloor(root: string, which: 'events' | 'all'): Promise<{ ms: number; values: number }> {
  const started = performance.now();
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  let values = 0;
  try {
    const dbs = store.databases;
    const scanned =
      which === 'events' ? [dbs.events] : [dbs.events, dbs.objects, dbs.blobs, dbs.heads, dbs.projections];
    for (const db of scanned) {
      // Touch each value so no lazy decoding can be skipped.
      for (const { value } of db.getRange({})) if (value !== undefined) values++;
    }
  } finally {
    await store.close();
  }
  return { ms: performance.now() - started, values };
}

export async function runFloorBench(ctx: BenchContext & { sizes?: Size[] }): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const size of ctx.sizes ?? (ctx.quick ? QUICK_SIZES : FULL_SIZES)) {
    const events = size.tasks * size.events;
    const { root } = await generateRoot({ ...size, onProgress: progress(ctx, 'lmdb', events) });
    const iterations = ctx.quick ? 3 : events >= 1_000_000 ? 3 : 5;
    for (const which of ['events', 'all'] as const) {
      let values = 0;
      const t = await timeIt(
        `floor ${which}`,
        async () => {
          const r = await scanFloor(root, which);
          values = r.values;
          return r.ms;
        },
        { iterations, warmup: true },
      );
      rows.push({
        scenario: 'floor',
        name:
          which === 'events'
            ? 'floor: open + scan + decode events'
            : 'floor: open + scan + decode everything recovery reads',
        tasks: size.tasks,
        events,
        ...t,
        rate: events / (t.medianMs / 1000),
        rateUnit: 'events/s',
        detail: { values },
      });
    }
  }
  return rows;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runFloorBench({ quick: scenarioArgs('floor.bench').quick, log: (l) => console.error(l) });
  console.table(rows.map((r) => ({ name: r.name, events: r.events, medianMs: r.medianMs.toFixed(0) })));
}
