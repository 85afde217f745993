// Scenario: the SQLite peer — the Host's schema and revision-CAS append on better-sqlite3 (WAL,
// synchronous FULL, events clustered by (task_id, revision)), loaded with the same workload
// through the same kernel, recovered with the same verifier (digest chain, objects, replay of
// every event through the same statechart, projections, identity) and then brought to the same
// point as `serving`: a live TaskActor per Task. One-thread and worker-thread variants, like the
// LMDB rows; plus the peer's own floor (ordered scan + JSON.parse of the events).
//
// tinybench, 3 timed runs per row (2 at 1M events) after one untimed warm-up.
//
//   node dist/bench/peers/peer.bench.js [--quick]
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { systemClock, TaskActor } from '../../kernel/index.js';
import { TaskSpec } from '../../objects/index.js';
import type { RecoveryReport } from '../../recovery/index.js';
import { generateRoot } from '../generate.js';
import { progress } from '../recovery.bench.js';
import { benchSizes, type BenchContext, type BenchRow, type Size } from '../report/results-model.js';
import { rebuildPeer, rebuildPeerParallel } from './sqlite-peer-recovery.js';
import { SqlitePeerStore, asKernelStore } from './sqlite-peer-store.js';
import { historyRow, scenarioArgs, timeIt, type Timing } from '../util.js';

/** Peer "boot to serving": verified rebuild, then specs and a live TaskActor per Task, as the supervisor does. */
export async function peerBoot(path: string, parallel: boolean): Promise<number> {
  const started = performance.now();
  const report: RecoveryReport = parallel ? await rebuildPeerParallel(path) : rebuildPeer(path);
  if (report.findings.length > 0)
    throw new Error(`peer ${path} is not healthy: ${JSON.stringify(report.findings.slice(0, 3))}`);
  const peer = SqlitePeerStore.open(path, { readOnly: true });
  const store = asKernelStore(peer);
  const actors = report.tasks.map((t) => {
    TaskSpec.parse(t.spec);
    return new TaskActor({
      taskId: t.taskId,
      snapshot: t.snapshot,
      revision: t.revision,
      store,
      clock: systemClock,
      onCommit: () => {},
    });
  });
  const ms = performance.now() - started;
  for (const actor of actors) actor.stop();
  peer.close();
  return ms;
}

/** The peer's floor: ordered scan of every event row and JSON.parse of its body. */
export function peerFloor(path: string): number {
  const started = performance.now();
  const peer = SqlitePeerStore.open(path, { readOnly: true });
  for (const body of peer.db.prepare('SELECT body FROM events ORDER BY task_id, revision').pluck().iterate())
    JSON.parse(body as string);
  peer.close();
  return performance.now() - started;
}

export async function runPeerBench(ctx: BenchContext & { sizes?: Size[] }): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const size of benchSizes(ctx)) {
    const events = size.tasks * size.events;
    const generated = await generateRoot({ ...size, target: 'sqlite', onProgress: progress(ctx, 'sqlite', events) });
    const path = join(generated.root, 'peer.sqlite');
    ctx.log(
      `peer: ${events.toLocaleString()} events (${generated.cached ? 'cached' : `generated in ${(generated.generateMs / 1000).toFixed(0)} s`})`,
    );
    const iterations = ctx.quick ? 2 : events >= 1_000_000 ? 2 : 3;
    const row = (name: string, t: Timing) => historyRow('peer', name, size, t);
    rows.push(
      row(
        'peer: SQLite verified recovery → live Tasks, worker threads',
        await timeIt('peer parallel', () => peerBoot(path, true), { iterations, warmup: true }),
      ),
    );
    rows.push(
      row(
        'peer: SQLite verified recovery → live Tasks, one thread',
        await timeIt('peer in-thread', () => peerBoot(path, false), {
          iterations: events >= 1_000_000 ? 1 : iterations,
        }),
      ),
    );
    rows.push(
      row(
        'peer floor: SQLite ordered scan + JSON.parse of events',
        await timeIt('peer floor', () => peerFloor(path), { iterations, warmup: true }),
      ),
    );
  }
  return rows;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runPeerBench({ quick: scenarioArgs('peers/peer.bench').quick, log: (l) => console.error(l) });
  console.table(rows.map((r) => ({ name: r.name, events: r.events, medianMs: r.medianMs.toFixed(0) })));
}
