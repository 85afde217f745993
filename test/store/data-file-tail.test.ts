import assert from 'node:assert/strict';
import { copyFileSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { open } from 'lmdb';
import { z } from 'zod';
import { EventStore, StoreError, type AppendInput } from '../../store/index.js';
import { checkDataFileTail } from '../../store/lmdb-tail.js';
import { tempDir } from '../support/temp.js';

const kinds = { note: z.object({ text: z.string() }) };

function event(id: string): AppendInput['event'] {
  return {
    id,
    type: 'note.add',
    origin: 'host',
    at: '2026-01-01T00:00:00.000Z',
    mono: 1,
    data: { id },
    refs: [],
    disposition: { admitted: true },
  };
}

const projection = (revision: number) => ({
  revision,
  machineVersion: 1,
  state: 'open',
  snapshot: { value: 'open', revision },
});

interface Stats {
  pageSize: number;
  lastPageNumber: number;
  lastTxnId: number;
}

/**
 * A healthy store whose last pages are listed as free: a large transaction that writes and a
 * later one that deletes (its pages are freed), then small appends that reuse free pages lower
 * in the file, so the pages at the end end up free. LMDB may leave such pages unwritten after a
 * large transaction (mdb.c, `mm_last_pg`: "the file may be shorter if the freeDB lists the final
 * pages"); cutting them off the file gives exactly that state.
 */
async function rootWithFreeTail(): Promise<{ root: string; stats: Stats; events: number }> {
  const root = tempDir();
  const store = EventStore.open({ root, kinds });
  let events = 0;
  try {
    for (let i = 1; i <= 20; i++, events++)
      await store.append({ taskId: 't1', expectedRevision: i - 1, event: event(`e${i}`), projection: projection(i) });
    const { env, meta } = store.databases;
    await env.transaction(() => {
      for (let i = 0; i < 300; i++) void meta.put(['scratch', String(i)], 'x'.repeat(9_000));
    });
    await env.transaction(() => {
      for (let i = 0; i < 300; i++) void meta.remove(['scratch', String(i)]);
    });
    for (let i = 21; i <= 40; i++, events++)
      await store.append({ taskId: 't1', expectedRevision: i - 1, event: event(`e${i}`), projection: projection(i) });
  } finally {
    await store.close();
  }
  const env = open({ path: join(root, 'lmdb'), maxDbs: 16, readOnly: true });
  const stats = env.getStats() as Stats;
  await env.close();
  return { root, stats, events };
}

/** The most pages that can be cut off the end of the file with every cut page listed as free. */
function freeTailPages(file: string, stats: Stats): number {
  const backup = `${file}.whole`;
  copyFileSync(file, backup);
  let pages = 0;
  try {
    for (let k = 1; k <= stats.lastPageNumber; k++) {
      truncateSync(file, (stats.lastPageNumber + 1 - k) * stats.pageSize);
      if (!checkDataFileTail(file, stats.pageSize, stats.lastPageNumber, stats.lastTxnId).whole) break;
      pages = k;
    }
  } finally {
    copyFileSync(backup, file);
  }
  return pages;
}

describe('EventStore.open: data file shorter than the last page number', () => {
  it('opens a healthy root whose final pages are free and absent from the file, and reads every record', async () => {
    const { root, stats, events } = await rootWithFreeTail();
    const file = join(root, 'lmdb', 'data.mdb');
    assert.equal(statSync(file).size, (stats.lastPageNumber + 1) * stats.pageSize);
    const free = freeTailPages(file, stats);
    assert.ok(free >= 1, 'the scenario leaves free pages at the end of the file');
    truncateSync(file, (stats.lastPageNumber + 1 - free) * stats.pageSize);

    // The check before this fix compared the size with the last page number and refused this root.
    assert.ok(statSync(file).size < (stats.lastPageNumber + 1) * stats.pageSize);
    const store = EventStore.open({ root, kinds });
    try {
      const stream = [...store.stream('t1')];
      assert.equal(stream.length, events);
      assert.equal(store.head('t1')?.revision, events);
      assert.equal(store.projection('t1')?.revision, events);
      // Still writable: the next commit allocates and writes pages as usual.
      await store.append({
        taskId: 't1',
        expectedRevision: events,
        event: event('after'),
        projection: projection(events + 1),
      });
      assert.equal(store.event('t1', events + 1)?.id, 'after');
    } finally {
      await store.close();
    }
  });

  it('refuses a file that lost a page the last commit reaches, with storage_failed naming the file', async () => {
    const { root, stats } = await rootWithFreeTail();
    const file = join(root, 'lmdb', 'data.mdb');
    const free = freeTailPages(file, stats);
    truncateSync(file, (stats.lastPageNumber + 1 - free - 1) * stats.pageSize);
    assert.throws(
      () => EventStore.open({ root, kinds }),
      (e) =>
        e instanceof StoreError &&
        e.code === 'storage_failed' &&
        /data\.mdb is truncated: \d+ bytes, \d+ page\(s\) its last commit reaches are missing/.test(e.message),
    );
    // Read-only opens (doctor, show) are refused the same way, before anything reads through the map.
    assert.throws(
      () => EventStore.open({ root, kinds, readOnly: true }),
      (e) => e instanceof StoreError && e.code === 'storage_failed',
    );
  });

  it('reports a file cut to a quarter as truncated, reading only with pread', async () => {
    const root = tempDir();
    const store = EventStore.open({ root, kinds });
    try {
      const revisions = new Map<string, number>();
      for (let i = 0; i < 300; i++) {
        const taskId = `t${i % 6}`;
        const revision = revisions.get(taskId) ?? 0;
        await store.append({
          taskId,
          expectedRevision: revision,
          event: event(`e${i}`),
          projection: projection(revision + 1),
        });
        revisions.set(taskId, revision + 1);
      }
    } finally {
      await store.close();
    }
    const env = open({ path: join(root, 'lmdb'), maxDbs: 16, readOnly: true });
    const stats = env.getStats() as Stats;
    await env.close();
    const file = join(root, 'lmdb', 'data.mdb');
    assert.equal(checkDataFileTail(file, stats.pageSize, stats.lastPageNumber, stats.lastTxnId).whole, true);
    truncateSync(file, Math.floor(statSync(file).size / 4 / stats.pageSize) * stats.pageSize);
    const check = checkDataFileTail(file, stats.pageSize, stats.lastPageNumber, stats.lastTxnId);
    assert.equal(check.whole, false);
    assert.ok(check.missingPages > 0);
    assert.throws(
      () => EventStore.open({ root, kinds }),
      (e) => e instanceof StoreError && e.code === 'storage_failed',
    );
  });
});
