// Scenario: checkpointed start — supervisor boot to `serving` with `recovery: 'checkpoint'` for
// the same number of Tasks carrying 10× more history (10,000 Tasks × 10 and × 100 events), and
// with a tail per Task after its checkpoint (a crash after checkpoints were last written): 5
// events at × 10, 50 at × 100 (halfway between periodic checkpoints, 3 runs).
// Cost should follow the number of Tasks, not the history.
//
// Beside them, the floor of that start: open the store and read + JSON.parse every checkpoint
// record, nothing else.
//
// tinybench, 5 timed runs per row after an untimed tinybench warm-up run and an untimed boot that
// checkpoints any Task lacking a current checkpoint.
// For the tail row each run first rewinds every checkpoint by 5 events (not timed); the timed
// boot verifies and replays the tails and writes fresh checkpoints.
//
//   node dist/bench/checkpoint.bench.js [--quick]
import { pathToFileURL } from 'node:url';
import { OBJECT_KINDS } from '../objects/index.js';
import { EventStore } from '../store/index.js';
import { rewindCheckpoints } from './checkpoint-rewind.js';
import { generateRoot } from './generate.js';
import { CHECKPOINT_FLOOR, CHECKPOINT_START } from './report/headline.js';
import { recoverFromCheckpoints } from '../recovery/index.js';
import { progress, timedBoot, timedRebuild } from './recovery.bench.js';
import type { BenchContext, BenchRow, Size } from './report/results-model.js';
import { scenarioArgs, timeIt } from './util.js';

/** Opens `root` read-only and reads + decodes every checkpoint record with one cursor; resolves with ms and count. */
export async function checkpointFloor(root: string): Promise<{ ms: number; checkpoints: number }> {
  const started = performance.now();
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  let checkpoints = 0;
  try {
    // Checkpoints are JSON text in `meta` under ['checkpoint', taskId] (recovery/checkpoint-store.ts).
    for (const { value } of store.databases.meta.getRange({ start: ['checkpoint', ''], end: ['checkpoint', '\uffff'] }))
      if (typeof value === 'string' && JSON.parse(value) !== null) checkpoints++;
  } finally {
    await store.close();
  }
  return { ms: performance.now() - started, checkpoints };
}

export async function runCheckpointBench(ctx: BenchContext & { tasks?: number }): Promise<BenchRow[]> {
  const tasks = ctx.tasks ?? (ctx.quick ? 200 : 10_000);
  const sizes: Size[] = [
    { tasks, events: 10 },
    { tasks, events: 100 },
  ];
  const rows: BenchRow[] = [];
  const iterations = ctx.quick ? 3 : 5;
  for (const size of sizes) {
    const events = size.tasks * size.events;
    const { root } = await generateRoot({ ...size, onProgress: progress(ctx, 'lmdb', events) });
    ctx.log(`checkpoint: ${size.tasks.toLocaleString()} Tasks × ${size.events} events`);
    // Warm-up (untimed): a Task without a current checkpoint is verified in full and checkpointed.
    await timedBoot(root, 'checkpoint');
    const t = await timeIt('checkpointed boot', () => timedBoot(root, 'checkpoint'), { iterations, warmup: true });
    rows.push({
      scenario: 'checkpoint',
      name: CHECKPOINT_START,
      tasks: size.tasks,
      events,
      ...t,
      rate: size.tasks / (t.medianMs / 1000),
      rateUnit: 'Tasks/s',
    });
    let checkpoints = 0;
    const floor = await timeIt(
      'checkpoint floor',
      async () => {
        const r = await checkpointFloor(root);
        checkpoints = r.checkpoints;
        return r.ms;
      },
      { iterations, warmup: true },
    );
    rows.push({
      scenario: 'checkpoint',
      name: CHECKPOINT_FLOOR,
      tasks: size.tasks,
      events,
      ...floor,
      rate: size.tasks / (floor.medianMs / 1000),
      rateUnit: 'Tasks/s',
      detail: { checkpoints },
    });
    // The share of that start spent reading and checking checkpoints (the rest is the supervisor
    // opening the store and tracking a TaskActor per Task; their XState actors are created on first use).
    const only = await timeIt(
      'recoverFromCheckpoints',
      () => timedRebuild(root, (store) => recoverFromCheckpoints(store)),
      { iterations, warmup: true },
    );
    rows.push({
      scenario: 'checkpoint',
      name: 'checkpointed recovery only: read + check checkpoints, no live actors',
      tasks: size.tasks,
      events,
      ...only,
      rate: size.tasks / (only.medianMs / 1000),
      rateUnit: 'Tasks/s',
    });
    // A crash after checkpoints were written: 5 events per Task at × 10; at × 100, 50 — halfway
    // between periodic checkpoints (`checkpointEvery` 100), over worker threads when a core is idle.
    const lag = size.events === 10 ? 5 : 50;
    const tail = await timeIt('checkpointed boot with tails', () => timedBoot(root, 'checkpoint'), {
      iterations: lag === 5 ? iterations : Math.min(iterations, 3),
      prepare: async () => void (await rewindCheckpoints(root, lag)),
    });
    rows.push({
      scenario: 'checkpoint',
      name: `checkpointed start: boot → serving, ${lag}-event tail per Task replayed`,
      tasks: size.tasks,
      events,
      ...tail,
      rate: size.tasks / (tail.medianMs / 1000),
      rateUnit: 'Tasks/s',
      detail: { tailEvents: size.tasks * lag },
    });
  }
  return rows;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runCheckpointBench({
    quick: scenarioArgs('checkpoint.bench').quick,
    log: (l) => console.error(l),
  });
  console.table(rows.map((r) => ({ name: r.name, tasks: r.tasks, events: r.events, medianMs: r.medianMs.toFixed(0) })));
}
