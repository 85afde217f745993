import assert from 'node:assert/strict';
import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EventStore, digestOf } from '../../store/index.js';
import { NOTE_KINDS, appendInput } from '../support/store-backends.js';
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

describe('EventStore on the journal, cut by a power failure', () => {
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

    let states = 0;
    for (const cut of syncBoundaries(trace, from)) {
      for (const unsynced of UNSYNCED) {
        const where = `cut ${cut} (${trace[cut - 1]?.op}), unsynced ${unsynced}`;
        const into = tempDir();
        for (const name of readdirSync(root))
          if (name !== 'lmdb' && name !== 'journal' && name !== 'state.lock')
            cpSync(join(root, name), join(into, name), { recursive: true });
        cpSync(lmdbBefore, join(into, 'lmdb'), { recursive: true });
        const acked = crashState(trace, cut, unsynced, root, into);
        const reopened = EventStore.open({ root: into, kinds: NOTE_KINDS });
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
            assert.equal(reopened.event(taskId, heads[t]! + 1), undefined, `${where}: nothing after ${taskId}'s head`);
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
        const again = EventStore.open({ root: into, kinds: NOTE_KINDS });
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
    assert.ok(states > 40, `${states} crash states checked`);
    assert.ok([...trace.slice(from)].filter((op) => op.op === 'ack').length === 9);
  });
});
