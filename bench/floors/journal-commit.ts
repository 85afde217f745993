import { open } from 'lmdb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { scriptArgsOrExit } from '../../cli/cli-io.js';
import { EventStore } from '../../store/index.js';
import { Journal, nodeJournalFs, type JournalFs } from '../../store/journal/index.js';

/**
 * A micro-benchmark of the commit alone, at a small size, outside the suite (`npm run bench` does
 * not run it; it writes no results file): appends/s and device flushes per append for 1 and 64
 * concurrent writers, the journal against one lmdb-js durable put (`put` then `flushed`) and
 * `EventStore.append` with the journal on and off. Flushes of the journal are counted at its
 * file-system layer; LMDB's are its commits (each one fdatasync of the data pages and one O_DSYNC
 * meta write), counted from the transaction id.
 *
 *   node dist/bench/floors/journal-commit.js [--appends N]
 */
const USAGE = 'usage: node dist/bench/floors/journal-commit.js [--appends N]  (default 512 per case)';
const args = scriptArgsOrExit(
  'journal-commit',
  USAGE,
  process.argv.slice(2),
  { appends: { type: 'string' } },
  z.object({ appends: z.coerce.number().int().min(64).default(512), help: z.boolean().optional() }),
);

const made: string[] = [];
process.on('exit', () => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function tempRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ordivon-journal-bench-'));
  made.push(dir);
  return dir;
}

const PAYLOAD = Buffer.alloc(1024, 0x61);
const DIGEST = new Uint8Array(32);

interface Row {
  case: string;
  writers: number;
  appendsPerSecond: number;
  flushesPerAppend: number;
}

/** Runs `total` calls of `one` from `writers` concurrent loops; resolves with the seconds taken. */
async function drive(writers: number, total: number, one: (writer: number, i: number) => Promise<unknown>) {
  const start = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      for (let i = writer; i < total; i += writers) await one(writer, i);
    }),
  );
  return (performance.now() - start) / 1000;
}

async function journalCase(writers: number, total: number): Promise<Row> {
  let syncs = 0;
  const fs: JournalFs = { ...nodeJournalFs, fdatasync: (fd) => (syncs++, nodeJournalFs.fdatasync(fd)) };
  const { journal } = Journal.open({ dir: join(tempRoot(), 'journal'), fs, segmentBytes: 16 << 20 });
  const seconds = await drive(writers, total, () => journal.append(PAYLOAD, DIGEST).synced);
  await journal.close();
  return {
    case: 'journal append (1 KiB)',
    writers,
    appendsPerSecond: total / seconds,
    flushesPerAppend: syncs / total,
  };
}

async function lmdbCase(writers: number, total: number): Promise<Row> {
  const env = open({ path: join(tempRoot(), 'lmdb') });
  const txn = () => (env.getStats() as { lastTxnId: number }).lastTxnId;
  const before = txn();
  const seconds = await drive(writers, total, async (_, i) => {
    await env.put(i, PAYLOAD);
    await env.flushed;
  });
  const commits = txn() - before;
  await env.close();
  return {
    case: 'LMDB durable put (1 KiB)',
    writers,
    appendsPerSecond: total / seconds,
    flushesPerAppend: (2 * commits) / total,
  };
}

async function storeCase(writers: number, total: number, journal: boolean): Promise<Row> {
  let syncs = 0;
  const fs: JournalFs = { ...nodeJournalFs, fdatasync: (fd) => (syncs++, nodeJournalFs.fdatasync(fd)) };
  const store = EventStore.open({ root: tempRoot(), kinds: {}, journal: journal ? { fs } : false });
  const txn = () => (store.databases.env.getStats() as { lastTxnId: number }).lastTxnId;
  const before = txn();
  const revisions = new Array<number>(writers).fill(0);
  const seconds = await drive(writers, total, async (writer) => {
    const revision = ++revisions[writer]!;
    await store.append({
      taskId: `t${writer}`,
      expectedRevision: revision - 1,
      event: {
        id: `e${revision}`,
        type: 'note.add',
        origin: 'host',
        at: '2026-01-01T00:00:00.000Z',
        mono: revision,
        data: {},
        refs: [],
        disposition: { admitted: true },
      },
      projection: {
        revision,
        machineVersion: 1,
        state: 'open',
        snapshot: { value: 'open', context: { note: 'x'.repeat(512) } },
      },
    });
  });
  const commits = txn() - before;
  await store.close();
  // With the journal, LMDB's commits still flush, behind the acknowledgement; both are counted.
  return {
    case: `EventStore.append, journal ${journal ? 'on' : 'off'}`,
    writers,
    appendsPerSecond: total / seconds,
    flushesPerAppend: (syncs + 2 * commits) / total,
  };
}

const rows: Row[] = [];
for (const writers of [1, 64]) {
  rows.push(await journalCase(writers, args.appends));
  rows.push(await lmdbCase(writers, args.appends));
  rows.push(await storeCase(writers, args.appends, true));
  rows.push(await storeCase(writers, args.appends, false));
}
console.table(
  rows.map((r) => ({
    case: r.case,
    writers: r.writers,
    'appends/s': Math.round(r.appendsPerSecond),
    'flushes/append': r.flushesPerAppend.toFixed(2),
  })),
);
