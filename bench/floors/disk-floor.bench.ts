// Scenario: the write floors admission is judged against, measured in the same run on the file
// system the benchmark's state roots live on (the OS temporary directory): one `fdatasync` of a
// small write, and lmdb-js's own durable puts — one writer awaiting each put until it is on disk
// (`await put; await flushed`), and 256 writers doing the same at once (lmdb-js batches the puts
// made in one event turn into one commit and one sync). Nothing of the Host runs here.
//
// Each floor is the median of `iterations` timed runs of many operations, on a fresh directory.
//
//   node dist/bench/floors/disk-floor.bench.js [--quick]
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { open } from 'lmdb';
import { FDATASYNC, PUT_256, PUT_ONE } from '../report/headline.js';
import type { BenchContext, BenchRow } from '../report/results-model.js';
import { scenarioArgs, timeIt } from '../util.js';

/** The size of the small write: about one journal event record. */
const SMALL = 200;

/** Writes `SMALL` bytes at offset 0 of a file in `dir` and `fdatasync`s it, `count` times; resolves with ms per sync. */
export function fdatasyncFloor(dir: string, count: number): number {
  const path = join(dir, 'fdatasync-probe');
  const fd = openSync(path, 'w');
  const bytes = Buffer.alloc(SMALL, 0x61);
  try {
    // The first sync allocates the file's block: not what a steady journal pays.
    writeSync(fd, bytes, 0, SMALL, 0);
    fdatasyncSync(fd);
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      writeSync(fd, bytes, 0, SMALL, 0);
      fdatasyncSync(fd);
    }
    return (performance.now() - started) / count;
  } finally {
    closeSync(fd);
  }
}

/**
 * Durable lmdb-js puts of a `SMALL`-byte value under `[writer, n]` keys in a fresh environment:
 * `writers` concurrent loops, each awaiting its put and then `flushed` before the next. Resolves
 * with the puts per second.
 */
export async function lmdbPutFloor(dir: string, writers: number, total: number): Promise<number> {
  const env = open({ path: join(dir, `lmdb-${writers}`), maxDbs: 4 });
  const db = env.openDB<string, [number, number]>({ name: 'floor' });
  const value = 'v'.repeat(SMALL);
  const each = Math.ceil(total / writers);
  try {
    // One untimed commit creates the database and its first pages.
    await db.put([-1, 0], value);
    await env.flushed;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let n = 0; n < each; n++) {
          await db.put([w, n], value);
          await env.flushed;
        }
      }),
    );
    return (writers * each) / ((performance.now() - started) / 1000);
  } finally {
    await env.close();
  }
}

export async function runDiskFloorBench(ctx: BenchContext): Promise<BenchRow[]> {
  const iterations = ctx.quick ? 3 : 5;
  const dir = mkdtempSync(join(tmpdir(), 'ordivon-bench-disk-'));
  try {
    const syncs = ctx.quick ? 500 : 2_000;
    const fsync = await timeIt('fdatasync', () => fdatasyncFloor(dir, syncs), { iterations });
    const rows: BenchRow[] = [
      {
        scenario: 'disk',
        name: FDATASYNC,
        ...fsync,
        rate: 1000 / fsync.medianMs,
        rateUnit: 'syncs/s',
        // medianMs is the median run's time per sync (each run times `syncs` of them).
        detail: { syncsPerRun: syncs, bytes: SMALL },
      },
    ];
    ctx.log(`disk: fdatasync ${(fsync.medianMs * 1000).toFixed(0)} µs`);
    for (const [writers, name] of [
      [1, PUT_ONE],
      [256, PUT_256],
    ] as const) {
      const total = writers === 1 ? (ctx.quick ? 300 : 2_000) : ctx.quick ? 5_000 : 40_000;
      let rate = 0;
      let run = 0;
      const t = await timeIt(
        name,
        async () => {
          rate = await lmdbPutFloor(join(dir, String(run++)), writers, total);
          return 1000 / rate;
        },
        { iterations },
      );
      rows.push({
        scenario: 'disk',
        name,
        tasks: writers,
        ...t,
        rate: 1000 / t.medianMs,
        rateUnit: 'puts/s',
        // medianMs is the time per put (the inverse of the rate) of the median run.
        detail: { writers, putsPerRun: total, bytes: SMALL },
      });
      ctx.log(`disk: ${name}: ${(1000 / t.medianMs).toFixed(0)} puts/s`);
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runDiskFloorBench({
    quick: scenarioArgs('floors/disk-floor.bench').quick,
    log: (l) => console.error(l),
  });
  console.table(rows.map((r) => ({ name: r.name, rate: r.rate?.toFixed(0), medianMs: r.medianMs.toFixed(3) })));
}
