import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { EventStore, StoreError, digestOf, type AppendInput } from '../../store/index.js';
import { tempDir } from '../support/temp.js';

const kinds = { note: z.object({ text: z.string() }) };

function event(id: string, refs: string[] = []): AppendInput['event'] {
  return {
    id,
    type: 'note.add',
    origin: 'host',
    at: '2026-01-01T00:00:00.000Z',
    mono: 1,
    data: {},
    refs,
    disposition: { admitted: true },
  };
}

function projection(revision: number) {
  return { revision, machineVersion: 1, state: 'open', snapshot: { value: 'open' } };
}

function code(error: unknown): string | undefined {
  return error instanceof StoreError ? error.code : undefined;
}

describe('EventStore.append', () => {
  it('appends revisions chained by digest and moves the head', async () => {
    const store = EventStore.open({ root: tempDir(), kinds });
    try {
      const first = await store.append({
        taskId: 't1',
        expectedRevision: 0,
        event: event('e1'),
        projection: projection(1),
      });
      const second = await store.append({
        taskId: 't1',
        expectedRevision: 1,
        event: event('e2'),
        projection: projection(2),
      });
      assert.equal(first.revision, 1);
      assert.equal(second.revision, 2);
      assert.equal(store.event('t1', 1)?.prev, null);
      assert.equal(store.event('t1', 2)?.prev, first.digest);
      assert.equal(digestOf(store.event('t1', 2)), second.digest);
      assert.deepEqual(store.head('t1'), { revision: 2, digest: second.digest });
    } finally {
      await store.close();
    }
  });

  it('counts the journal in O(1): every event, not the shared-structures record lmdb-js keeps beside them', async () => {
    const root = tempDir();
    const store = EventStore.open({ root, kinds });
    try {
      assert.equal(store.journalSize(), 0);
      for (const [taskId, count] of [
        ['t1', 3],
        ['t2', 1],
        ['t3', 5],
      ] as const) {
        for (let r = 0; r < count; r++)
          await store.append({
            taskId,
            expectedRevision: r,
            event: event(`${taskId}-${r}`),
            projection: projection(r + 1),
          });
      }
      // A refused append writes nothing and counts nothing.
      await assert.rejects(
        store.append({ taskId: 't1', expectedRevision: 1, event: event('late'), projection: projection(2) }),
        (e) => code(e) === 'revision_conflict',
      );
      assert.equal(store.journalSize(), 9);
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
      assert.equal(readOnly.journalSize(), 9);
    } finally {
      await readOnly.close();
    }
  });

  it('rejects an append whose expected revision is behind the head with revision_conflict', async () => {
    const store = EventStore.open({ root: tempDir(), kinds });
    try {
      await store.append({ taskId: 't1', expectedRevision: 0, event: event('e1'), projection: projection(1) });
      await assert.rejects(
        store.append({ taskId: 't1', expectedRevision: 0, event: event('other'), projection: projection(1) }),
        (e) => code(e) === 'revision_conflict',
      );
      await assert.rejects(
        store.append({ taskId: 't1', expectedRevision: 5, event: event('ahead'), projection: projection(6) }),
        (e) => code(e) === 'revision_conflict',
      );
      assert.equal(store.head('t1')?.revision, 1);
      assert.equal(store.event('t1', 1)?.id, 'e1');
    } finally {
      await store.close();
    }
  });

  it('acknowledges a retried append with the same event id without writing', async () => {
    const store = EventStore.open({ root: tempDir(), kinds });
    try {
      const first = await store.append({
        taskId: 't1',
        expectedRevision: 0,
        event: event('e1'),
        projection: projection(1),
      });
      const before = store.databases.env.getStats() as { lastTxnId?: number };
      const retry = await store.append({
        taskId: 't1',
        expectedRevision: 0,
        event: event('e1'),
        projection: projection(1),
      });
      assert.deepEqual(retry, { revision: 1, digest: first.digest, duplicate: true });
      assert.equal(store.head('t1')?.revision, 1);
      assert.equal([...store.stream('t1')].length, 1);
      const afterStats = store.databases.env.getStats() as { lastTxnId?: number };
      assert.equal(afterStats.lastTxnId, before.lastTxnId, 'a duplicate must not commit a write transaction');
    } finally {
      await store.close();
    }
  });

  it('writes referenced objects in the same commit and refuses refs to missing objects', async () => {
    const store = EventStore.open({ root: tempDir(), kinds });
    try {
      const note = store.prepareObject({ kind: 'note', body: { text: 'hello' } });
      await store.append({
        taskId: 't1',
        expectedRevision: 0,
        event: event('e1', [note.digest]),
        objects: [{ kind: 'note', body: { text: 'hello' } }],
        projection: projection(1),
      });
      assert.deepEqual(store.getObject(note.digest).body, { text: 'hello' });
      const missing = digestOf({ kind: 'note', body: { text: 'never written' } });
      await assert.rejects(
        store.append({ taskId: 't1', expectedRevision: 1, event: event('e2', [missing]), projection: projection(2) }),
        (e) => code(e) === 'object_missing',
      );
      assert.equal(store.head('t1')?.revision, 1);
    } finally {
      await store.close();
    }
  });

  it('refuses an object that fails its kind schema with object_invalid and the field path', async () => {
    const store = EventStore.open({ root: tempDir(), kinds });
    try {
      await assert.rejects(
        store.append({
          taskId: 't1',
          expectedRevision: 0,
          event: event('e1'),
          objects: [{ kind: 'note', body: { text: 3 } }],
          projection: projection(1),
        }),
        (e) => code(e) === 'object_invalid' && /note at text/.test((e as Error).message),
      );
      assert.equal(store.head('t1'), undefined);
    } finally {
      await store.close();
    }
  });

  it('refuses a request id claimed by another Task with identity_conflict and writes nothing', async () => {
    const store = EventStore.open({ root: tempDir(), kinds });
    try {
      await store.append({
        taskId: 'a',
        expectedRevision: 0,
        event: event('e1'),
        claims: [{ kind: 'request', key: 'r-1' }],
        projection: projection(1),
      });
      await assert.rejects(
        store.append({
          taskId: 'b',
          expectedRevision: 0,
          event: event('e1'),
          claims: [{ kind: 'request', key: 'r-1' }],
          projection: projection(1),
        }),
        (e) => code(e) === 'identity_conflict',
      );
      assert.equal(store.head('b'), undefined);
      assert.deepEqual(store.owners('request', 'r-1'), ['a']);
    } finally {
      await store.close();
    }
  });

  it('admits exactly one of several concurrent appends at the same revision', async () => {
    const store = EventStore.open({ root: tempDir(), kinds });
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) =>
          store.append({ taskId: 't1', expectedRevision: 0, event: event(`e${i}`), projection: projection(1) }),
        ),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      assert.ok(
        results
          .filter((r) => r.status === 'rejected')
          .every((r) => code((r as PromiseRejectedResult).reason) === 'revision_conflict'),
      );
      assert.equal(store.head('t1')?.revision, 1);
    } finally {
      await store.close();
    }
  });

  it('records a soft warning when a stream reaches the configured length', async () => {
    const store = EventStore.open({ root: tempDir(), kinds, streamWarnAt: 3 });
    try {
      for (let r = 0; r < 3; r++)
        await store.append({ taskId: 't1', expectedRevision: r, event: event(`e${r}`), projection: projection(r + 1) });
      assert.deepEqual(
        store.warnings().map((w) => [w.taskId, w.revision, w.threshold]),
        [['t1', 3, 3]],
      );
    } finally {
      await store.close();
    }
  });
});

describe('state root', () => {
  it('refuses a second writer on the same root with state_locked but allows a read-only opener', async () => {
    const root = tempDir();
    const store = EventStore.open({ root, kinds, purpose: 'first' });
    try {
      await store.append({ taskId: 't1', expectedRevision: 0, event: event('e1'), projection: projection(1) });
      assert.throws(
        () => EventStore.open({ root, kinds }),
        (e) => code(e) === 'state_locked' && /first/.test((e as Error).message),
      );
      const reader = EventStore.open({ root, kinds, readOnly: true });
      assert.equal(reader.head('t1')?.revision, 1);
      await assert.rejects(
        reader.append({ taskId: 't1', expectedRevision: 1, event: event('e2'), projection: projection(2) }),
        (e) => code(e) === 'read_only',
      );
      await reader.close();
    } finally {
      await store.close();
    }
    const again = EventStore.open({ root, kinds });
    assert.equal(again.head('t1')?.revision, 1);
    await again.close();
  });

  it('refuses an unknown format version with format_unknown', () => {
    const root = tempDir();
    writeFileSync(join(root, 'format.json'), JSON.stringify({ format: 'ordivon-state', version: 99 }));
    assert.throws(
      () => EventStore.open({ root, kinds }),
      (e) => code(e) === 'format_unknown',
    );
    assert.throws(
      () => EventStore.open({ root, kinds, readOnly: true }),
      (e) => code(e) === 'format_unknown',
    );
  });

  it('refuses to open a missing root read-only with state_missing', () => {
    assert.throws(
      () => EventStore.open({ root: join(tempDir(), 'nothing'), kinds, readOnly: true }),
      (e) => code(e) === 'state_missing',
    );
  });
});
