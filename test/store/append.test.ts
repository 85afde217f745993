import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { EventStore, digestOf } from '../../store/index.js';
import {
  NOTE_KINDS,
  appendInput as input,
  eventRows,
  storeCode as code,
  storeBackends,
  testEvent as event,
  type BackendOpenOptions,
  type OpenedStore,
} from '../support/store-backends.js';
import { tempDir } from '../support/temp.js';

const kinds = NOTE_KINDS;

/** Where the store has an authority, it holds exactly `count` events too: a refused append or a retry wrote nothing there either. */
async function assertAuthorityEvents(opened: OpenedStore, count: number): Promise<void> {
  if (opened.url !== undefined) assert.equal(await eventRows(opened.url), count, 'events at the authority');
}

for (const backend of storeBackends()) {
  describe(backend.name, { skip: backend.skip }, () => {
    after(() => backend.stop());

    async function withStore(options: BackendOpenOptions, fn: (opened: OpenedStore) => Promise<void>): Promise<void> {
      const opened = await backend.open(options);
      try {
        await fn(opened);
      } finally {
        await opened.close();
      }
    }

    describe('EventStore.append', () => {
      it('appends revisions chained by digest and moves the head', () =>
        withStore({}, async (opened) => {
          const { store } = opened;
          const first = await store.append(input('t1', 0, 'e1'));
          const second = await store.append(input('t1', 1, 'e2'));
          assert.equal(first.revision, 1);
          assert.equal(second.revision, 2);
          assert.equal(store.event('t1', 1)?.prev, null);
          assert.equal(store.event('t1', 2)?.prev, first.digest);
          assert.equal(digestOf(store.event('t1', 2)), second.digest);
          assert.deepEqual(store.head('t1'), { revision: 2, digest: second.digest });
          await assertAuthorityEvents(opened, 2);
        }));

      it('rejects an append whose expected revision is behind the head with revision_conflict', () =>
        withStore({}, async (opened) => {
          const { store } = opened;
          await store.append(input('t1', 0, 'e1'));
          await assert.rejects(store.append(input('t1', 0, 'other')), (e) => code(e) === 'revision_conflict');
          await assert.rejects(store.append(input('t1', 5, 'ahead')), (e) => code(e) === 'revision_conflict');
          assert.equal(store.head('t1')?.revision, 1);
          assert.equal(store.event('t1', 1)?.id, 'e1');
          await assertAuthorityEvents(opened, 1);
        }));

      it('acknowledges a retried append with the same event id without writing', () =>
        withStore({}, async (opened) => {
          const { store } = opened;
          const first = await store.append(input('t1', 0, 'e1'));
          const before = store.databases.env.getStats() as { lastTxnId?: number };
          const retry = await store.append(input('t1', 0, 'e1'));
          assert.deepEqual(retry, { revision: 1, digest: first.digest, duplicate: true });
          assert.equal(store.head('t1')?.revision, 1);
          assert.equal([...store.stream('t1')].length, 1);
          const afterStats = store.databases.env.getStats() as { lastTxnId?: number };
          assert.equal(afterStats.lastTxnId, before.lastTxnId, 'a duplicate must not commit a write transaction');
          await assertAuthorityEvents(opened, 1);
        }));

      it('writes referenced objects in the same commit and refuses refs to missing objects', () =>
        withStore({}, async (opened) => {
          const { store } = opened;
          const note = store.prepareObject({ kind: 'note', body: { text: 'hello' } });
          await store.append(
            input('t1', 0, 'e1', {
              event: event('e1', [note.digest]),
              objects: [{ kind: 'note', body: { text: 'hello' } }],
            }),
          );
          assert.deepEqual(store.getObject(note.digest).body, { text: 'hello' });
          const missing = digestOf({ kind: 'note', body: { text: 'never written' } });
          await assert.rejects(
            store.append(input('t1', 1, 'e2', { event: event('e2', [missing]) })),
            (e) => code(e) === 'object_missing',
          );
          assert.equal(store.head('t1')?.revision, 1);
          await assertAuthorityEvents(opened, 1);
        }));

      it('refuses an object that fails its kind schema with object_invalid and the field path', () =>
        withStore({}, async (opened) => {
          const { store } = opened;
          await assert.rejects(
            store.append(input('t1', 0, 'e1', { objects: [{ kind: 'note', body: { text: 3 } }] })),
            (e) => code(e) === 'object_invalid' && /note at text/.test((e as Error).message),
          );
          assert.equal(store.head('t1'), undefined);
          await assertAuthorityEvents(opened, 0);
        }));

      it('refuses a request id claimed by another Task with identity_conflict and writes nothing', () =>
        withStore({}, async (opened) => {
          const { store } = opened;
          await store.append(input('a', 0, 'e1', { claims: [{ kind: 'request', key: 'r-1' }] }));
          await assert.rejects(
            store.append(input('b', 0, 'e1', { claims: [{ kind: 'request', key: 'r-1' }] })),
            (e) => code(e) === 'identity_conflict',
          );
          assert.equal(store.head('b'), undefined);
          assert.deepEqual(store.owners('request', 'r-1'), ['a']);
          await assertAuthorityEvents(opened, 1);
        }));

      it('admits exactly one of several concurrent appends at the same revision', () =>
        withStore({}, async (opened) => {
          const { store } = opened;
          const results = await Promise.allSettled(
            Array.from({ length: 8 }, (_, i) => store.append(input('t1', 0, `e${i}`))),
          );
          assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
          assert.ok(
            results
              .filter((r) => r.status === 'rejected')
              .every((r) => code((r as PromiseRejectedResult).reason) === 'revision_conflict'),
          );
          assert.equal(store.head('t1')?.revision, 1);
          await assertAuthorityEvents(opened, 1);
        }));

      it('records a soft warning when a stream reaches the configured length', () =>
        withStore({ streamWarnAt: 3 }, async ({ store }) => {
          for (let r = 0; r < 3; r++) await store.append(input('t1', r, `e${r}`));
          assert.deepEqual(
            store.warnings().map((w) => [w.taskId, w.revision, w.threshold]),
            [['t1', 3, 3]],
          );
        }));
    });

    describe('state root', () => {
      it('refuses a second writer on the same root with state_locked but allows a read-only opener', async () => {
        const first = await backend.open({ purpose: 'first' });
        try {
          await first.store.append(input('t1', 0, 'e1'));
          assert.throws(
            () => first.reopen(),
            (e) => code(e) === 'state_locked' && /first/.test((e as Error).message),
          );
          const reader = first.reopen({ readOnly: true });
          assert.equal(reader.head('t1')?.revision, 1);
          await assert.rejects(reader.append(input('t1', 1, 'e2')), (e) => code(e) === 'read_only');
          await reader.close();
        } finally {
          await first.close();
        }
        await withStore({ root: first.root, ...(first.url ? { url: first.url } : {}) }, async ({ store }) => {
          assert.equal(store.head('t1')?.revision, 1);
        });
      });

      it('refuses an unknown format version with format_unknown', async () => {
        const root = tempDir();
        writeFileSync(join(root, 'format.json'), JSON.stringify({ format: 'ordivon-state', version: 99 }));
        await assert.rejects(backend.open({ root }), (e) => code(e) === 'format_unknown');
        await assert.rejects(backend.open({ root, readOnly: true }), (e) => code(e) === 'format_unknown');
      });

      it('refuses to open a missing root read-only with state_missing', async () => {
        await assert.rejects(
          backend.open({ root: join(tempDir(), 'nothing'), readOnly: true }),
          (e) => code(e) === 'state_missing',
        );
      });
    });
  });
}

// LMDB's own bookkeeping, not the store contract: the size is LMDB's entry count for the events
// database, which on a mirror counts what this Host copied in, not the shared history.
describe('EventStore.eventCount (lmdb only)', () => {
  it('counts the journal in O(1): every event, not the shared-structures record lmdb-js keeps beside them', async () => {
    const root = tempDir();
    const store = EventStore.open({ root, kinds });
    try {
      assert.equal(store.eventCount(), 0);
      for (const [taskId, count] of [
        ['t1', 3],
        ['t2', 1],
        ['t3', 5],
      ] as const) {
        for (let r = 0; r < count; r++) await store.append(input(taskId, r, `${taskId}-${r}`));
      }
      // A refused append writes nothing and counts nothing.
      await assert.rejects(store.append(input('t1', 1, 'late')), (e) => code(e) === 'revision_conflict');
      assert.equal(store.eventCount(), 9);
      assert.equal(
        store.databases.events.doesExist(Symbol.for('structures') as never),
        true,
        'the structures record is there and not counted',
      );
    } finally {
      await store.close();
    }
    const readOnly = EventStore.open({ root, kinds, readOnly: true });
    try {
      assert.equal(readOnly.eventCount(), 9);
    } finally {
      await readOnly.close();
    }
  });
});
