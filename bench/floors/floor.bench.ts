// Scenario: the physical floor of recovery — open the store and range-scan the same bytes with
// lmdb's decoding, and nothing else: no parsing, hashing, replay or comparison. Two floors:
// the events alone (what issue 7's 2.45 s prototype figure measured), and every database the
// verified path reads (events, objects, artifact blobs, heads, projections).
//
// A third floor is the statechart's own: XState's step alone over the same events — decoded into
// machine events in memory beforehand (untimed), then one actor per Task started and sent every
// event, nothing else (no digests, dispositions, objects or projections).
//
// tinybench, 3 timed runs per row (5 up to 100k events) after the recovery scenario warmed the
// page cache.
//
//   node dist/bench/floors/floor.bench.js [--quick]
import { pathToFileURL } from 'node:url';
import { createActor } from 'xstate';
import { taskMachine, type TaskEvent } from '../../machines/index.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { EventStore } from '../../store/index.js';
import { generateRoot } from '../generate.js';
import { machineEvents } from '../machine-events.js';
import { FLOOR_ALL, FLOOR_EVENTS, XSTATE_FLOOR } from '../report/headline.js';
import { progress } from '../recovery.bench.js';
import { benchSizes, type BenchContext, type BenchRow, type GivenHistory, type Size } from '../report/results-model.js';
import { scenarioArgs, timeIt, totalsRow } from '../util.js';

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

/** XState's step alone: per stream, one started actor sent every event; resolves with the ms taken. */
export function stepFloor(streams: TaskEvent[][]): number {
  const started = performance.now();
  for (const events of streams) {
    const actor = createActor(taskMachine).start();
    for (const event of events) actor.send(event);
    if (actor.getSnapshot().status === 'error') throw new Error('the statechart failed on a stream of the history');
    actor.stop();
  }
  return performance.now() - started;
}

/** The floor rows: per size, of a generated history; with `history`, of that history alone (a copy of a user's state root). */
export async function runFloorBench(
  ctx: BenchContext & { sizes?: Size[]; history?: GivenHistory },
): Promise<BenchRow[]> {
  if (ctx.history) return rootFloors(ctx.history.root, ctx.history, ctx.quick);
  const rows: BenchRow[] = [];
  for (const size of benchSizes(ctx)) {
    const events = size.tasks * size.events;
    const { root } = await generateRoot({ ...size, onProgress: progress(ctx, 'lmdb', events) });
    rows.push(...(await rootFloors(root, { tasks: size.tasks, events }, ctx.quick)));
  }
  return rows;
}

/** The floors of one root: the events scan, the scan of everything recovery reads, XState's step alone. */
async function rootFloors(
  root: string,
  { tasks, events }: { tasks: number; events: number },
  quick: boolean,
): Promise<BenchRow[]> {
  const iterations = quick || events >= 1_000_000 ? 3 : 5;
  const rows: BenchRow[] = [];
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
    rows.push(totalsRow('floor', which === 'events' ? FLOOR_EVENTS : FLOOR_ALL, { tasks, events }, t, { values }));
  }
  const streams = await machineEvents(root);
  const step = await timeIt('xstate step', () => stepFloor(streams), { iterations, warmup: true });
  rows.push(totalsRow('floor', XSTATE_FLOOR, { tasks, events }, step));
  return rows;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runFloorBench({ quick: scenarioArgs('floors/floor.bench').quick, log: (l) => console.error(l) });
  console.table(rows.map((r) => ({ name: r.name, events: r.events, medianMs: r.medianMs.toFixed(0) })));
}
