import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EventStore, digestOf } from '../../store/index.js';
import { nodeJournalFs, type JournalFs } from '../../store/journal/index.js';
import { NOTE_KINDS, appendInput, storeCode } from '../support/store-backends.js';
import { until } from '../support/until.js';
import { UNSYNCED, crashState, recordingFs, syncBoundaries, type FsOp } from '../support/recording-fs.js';
import { tempDir } from '../support/temp.js';

const TASKS = ['t0', 't1', 't2'];
const SEGMENT_BYTES = 1 << 20;

/** Appends `count` events to each Task, the Tasks concurrently; marks each acknowledgement in the trace. */
async function workload(store: EventStore, trace: FsOp[], attempted: Map<string, string>, tag: string, count: number) {
  await Promise.all(
    TASKS.map(async (taskId) => {
      for (let i = 0; i < count; i++) {
        const head = store.head(taskId)?.revision ?? 0;
        const id = `${taskId}-${tag}${i}`;
        attempted.set(`${taskId}:${head + 1}`, id);
        const { revision, digest } = await store.append(appendInput(taskId, head, id));
        trace.push({ op: 'ack', id: `${taskId}|${revision}|${digest}` });
      }
    }),
  );
}

describe('EventStore on the journal (journal: true), cut by a power failure', () => {
  it('holds every acknowledged append after reopening, each stream a valid chain of attempted events, at every cut', async () => {
    const root = tempDir();
    const trace: FsOp[] = [];
    const attempted = new Map<string, string>();
    const journal = { fs: recordingFs(trace), segmentBytes: SEGMENT_BYTES };
    let store = EventStore.open({ root, kinds: NOTE_KINDS, journal });
    await workload(store, trace, attempted, 'a', 2);
    await store.close();
    // LMDB as a power cut may leave it: durable only up to here (the journal must bring the rest).
    const lmdbBefore = join(tempDir(), 'lmdb');
    cpSync(join(root, 'lmdb'), lmdbBefore, { recursive: true });
    const from = trace.length;
    store = EventStore.open({ root, kinds: NOTE_KINDS, journal });
    await workload(store, trace, attempted, 'b', 3);
    await store.close();
    // LMDB is written beside the journal's sync, so it may also be ahead of the journal at a cut:
    // durable with every append, acknowledged or not.
    const lmdbAfter = join(tempDir(), 'lmdb');
    cpSync(join(root, 'lmdb'), lmdbAfter, { recursive: true });

    let states = 0;
    for (const [lmdbAt, lmdbCopy] of [
      ['behind', lmdbBefore],
      ['ahead', lmdbAfter],
    ] as const)
      for (const cut of syncBoundaries(trace, from)) {
        for (const unsynced of UNSYNCED) {
          const where = `LMDB ${lmdbAt}, cut ${cut} (${trace[cut - 1]?.op}), unsynced ${unsynced}`;
          const into = tempDir();
          for (const name of readdirSync(root))
            if (name !== 'lmdb' && name !== 'journal' && name !== 'state.lock')
              cpSync(join(root, name), join(into, name), { recursive: true });
          cpSync(lmdbCopy, join(into, 'lmdb'), { recursive: true });
          const acked = crashState(trace, cut, unsynced, root, into);
          const reopened = EventStore.open({ root: into, kinds: NOTE_KINDS, journal: true });
          const heads = TASKS.map((taskId) => reopened.head(taskId)?.revision ?? 0);
          try {
            for (const id of acked) {
              const [taskId, revision, digest] = id.split('|') as [string, string, string];
              const event = reopened.event(taskId, Number(revision));
              assert.ok(event, `${where}: acknowledged ${taskId} r${revision} is there`);
              assert.equal(digestOf(event), digest, `${where}: ${taskId} r${revision} intact`);
            }
            for (const [t, taskId] of TASKS.entries()) {
              let prev: string | null = null;
              for (let revision = 1; revision <= heads[t]!; revision++) {
                const event = reopened.event(taskId, revision);
                assert.ok(event, `${where}: ${taskId} r${revision} is there below the head`);
                assert.equal(event.id, attempted.get(`${taskId}:${revision}`), `${where}: ${taskId} r${revision}`);
                assert.equal(event.prev, prev, `${where}: ${taskId} r${revision} chained`);
                prev = digestOf(event);
              }
              assert.equal(
                reopened.event(taskId, heads[t]! + 1),
                undefined,
                `${where}: nothing after ${taskId}'s head`,
              );
              assert.equal(
                reopened.projection(taskId)?.revision,
                heads[t] || undefined,
                `${where}: ${taskId} projection`,
              );
            }
            const next = await reopened.append(appendInput('t0', heads[0]!, 'after-crash'));
            assert.equal(next.revision, heads[0]! + 1, where);
          } finally {
            await reopened.close();
          }
          // Applying the journal again changes nothing (idempotent), and the append after the cut is kept.
          const again = EventStore.open({ root: into, kinds: NOTE_KINDS, journal: true });
          try {
            assert.deepEqual(
              TASKS.map((taskId) => again.head(taskId)?.revision ?? 0),
              [heads[0]! + 1, ...heads.slice(1)],
              where,
            );
          } finally {
            await again.close();
          }
          states++;
        }
      }
    assert.ok(states > 80, `${states} crash states checked`);
    assert.ok([...trace.slice(from)].filter((op) => op.op === 'ack').length === 9);
  });
});

describe('EventStore.open journal option', () => {
  it('keeps no journal by default, and a journal left in the root is applied by an open without one', async () => {
    const plain = tempDir();
    const off = EventStore.open({ root: plain, kinds: NOTE_KINDS });
    await off.append(appendInput('t0', 0, 'e1'));
    await off.close();
    assert.equal(existsSync(join(plain, 'journal')), false, 'no journal directory');

    const root = tempDir();
    const trace: FsOp[] = [];
    const on = EventStore.open({ root, kinds: NOTE_KINDS, journal: { fs: recordingFs(trace) } });
    await on.close();
    const lmdbBefore = join(tempDir(), 'lmdb');
    cpSync(join(root, 'lmdb'), lmdbBefore, { recursive: true });
    const again = EventStore.open({ root, kinds: NOTE_KINDS, journal: true });
    const { digest } = await again.append(appendInput('t0', 0, 'e1'));
    await again.close();
    // LMDB as before that append: only the journal holds it.
    rmSync(join(root, 'lmdb'), { recursive: true });
    cpSync(lmdbBefore, join(root, 'lmdb'), { recursive: true });
    const reader = EventStore.open({ root, kinds: NOTE_KINDS, journal: false });
    try {
      assert.deepEqual(reader.head('t0'), { revision: 1, digest });
    } finally {
      await reader.close();
    }
  });

  it('refuses every append journal_failed once a journal sync failed, and the next open applies what the journal holds', async () => {
    const root = tempDir();
    let fail = false;
    const fs: JournalFs = {
      ...nodeJournalFs,
      fdatasync: (fd) => (fail ? Promise.reject(new Error('EIO: i/o error')) : nodeJournalFs.fdatasync(fd)),
    };
    const store = EventStore.open({ root, kinds: NOTE_KINDS, journal: { fs } });
    await store.append(appendInput('t0', 0, 'e1'));
    fail = true;
    await assert.rejects(store.append(appendInput('t0', 1, 'e2')), (e) => storeCode(e) === 'journal_failed');
    fail = false;
    await assert.rejects(store.append(appendInput('t1', 0, 'e1')), (e) => storeCode(e) === 'journal_failed');
    await store.close();
    // The failed group's write did reach the page cache here; the next open takes it as written.
    const reopened = EventStore.open({ root, kinds: NOTE_KINDS, journal: true });
    try {
      assert.equal(reopened.head('t0')?.revision, 2);
      assert.equal(reopened.head('t1'), undefined);
      assert.equal((await reopened.append(appendInput('t1', 0, 'e1'))).revision, 1);
    } finally {
      await reopened.close();
    }
  });

  it('removes a filled segment once LMDB holds its records durably, and keeps the tail', async () => {
    const root = tempDir();
    const store = EventStore.open({ root, kinds: NOTE_KINDS, journal: { segmentBytes: 4096 } });
    for (let revision = 1; revision <= 12; revision++)
      await store.append(appendInput('t0', revision - 1, `e${revision}`));
    await until('the filled segments are removed', 10_000, async () =>
      readdirSync(join(root, 'journal')).length === 1 ? true : undefined,
    );
    await store.close();
    const reopened = EventStore.open({ root, kinds: NOTE_KINDS, journal: { segmentBytes: 4096 } });
    try {
      assert.equal(reopened.head('t0')?.revision, 12);
      assert.equal((await reopened.append(appendInput('t0', 12, 'e13'))).revision, 13);
    } finally {
      await reopened.close();
    }
  });
});
