import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { z } from 'zod';
import { createSupervisor } from '../../kernel/supervisor.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { rebuildTask } from '../../recovery/rebuild.js';
import { EventStore, IndexKind, digestOf, sha256Bytes, type EventRecord, type StoreError } from '../../store/index.js';
import {
  appendInput as input,
  eventRows,
  sql,
  storeBackends,
  storeCode as code,
  testEvent,
  type OpenedStore,
} from '../support/store-backends.js';
import { SPEC, driveToRunning, observeRun } from '../support/tasks.js';
import { startProxy } from '../support/tcp-proxy.js';
import { PgHistory } from '../../store/postgres/index.js';
import { tempDir } from '../support/temp.js';

const backend = storeBackends().find((b) => b.name === 'postgres')!;

/** The authority's row of a Task: its head and its lease. */
async function taskRow(url: string, taskId: string) {
  const { rows } = await sql(
    url,
    `SELECT revision::int, digest, lease_owner, lease_epoch::int FROM ordivon_tasks WHERE task_id = $1`,
    [taskId],
  );
  return rows.length === 0
    ? undefined
    : z
        .object({ revision: z.number(), digest: z.string(), lease_owner: z.string(), lease_epoch: z.number() })
        .parse(rows[0]);
}

/** Ends `hostId`'s leases (of one Task, or all) as if it had stopped renewing long ago, on the database clock. */
async function expireLeases(url: string, hostId: string, taskId?: string): Promise<void> {
  await sql(
    url,
    `UPDATE ordivon_tasks SET lease_until = now() - interval '1 second'
     WHERE lease_owner = $1 AND ($2::text IS NULL OR task_id = $2)`,
    [hostId, taskId ?? null],
  );
}

/** What a store holds of every kind of value, each as a digest of its stored bytes: equal maps mean equal bytes. */
function contents(store: EventStore, taskId: string) {
  const { objects, blobs } = store.databases;
  const bytesOf = (db: typeof objects) =>
    Object.fromEntries([...db.getKeys()].map((key) => [key, sha256Bytes(db.getBinary(key)!)]));
  return {
    events: [...store.stream(taskId)].map(({ revision, event }) => [revision, digestOf(event)]),
    head: store.head(taskId),
    projection: store.projectionSha256(taskId),
    claims: IndexKind.options.flatMap((kind) =>
      [...store.indexEntries(kind)].map(({ key }) => [kind, key, store.claimedAt(kind, key, taskId)]),
    ),
    objects: bytesOf(objects),
    blobs: bytesOf(blobs),
  };
}

describe('two Hosts on one PostgreSQL database: the authority behind the store', { skip: backend.skip }, () => {
  after(() => backend.stop());

  /** Two Hosts' stores (two histories, two state roots) on one fresh database. */
  async function twoHosts(fn: (a: OpenedStore, b: OpenedStore, url: string) => Promise<void>): Promise<void> {
    const a = await backend.open({ hostId: 'host-a' });
    const url = a.url!;
    try {
      const b = await backend.open({ url, hostId: 'host-b' });
      try {
        await fn(a, b, url);
      } finally {
        await b.close();
      }
    } finally {
      await a.close();
    }
  }

  it('revision CAS holds across Hosts: a Host cannot append to a Task another Host holds', () =>
    twoHosts(async (a, b, url) => {
      await a.store.append(input('t1', 0, 'a1'));
      await a.store.append(input('t1', 1, 'a2'));
      const held = await taskRow(url, 't1');

      // B has not seen the Task: the authority's head refuses its first revision.
      await assert.rejects(b.store.append(input('t1', 0, 'b1')), (e) => code(e) === 'revision_conflict');
      assert.equal(b.store.head('t1'), undefined);

      // B reads the Task into its mirror and appends at the head: A holds the lease (B holds no
      // epoch for it, so its history refuses before asking the database; the database's own fence
      // is the next test's).
      await b.store.copyIn(await b.history!.copyTask('t1'));
      const mirrored = contents(b.store, 't1');
      await assert.rejects(b.store.append(input('t1', 2, 'b3')), (e) => code(e) === 'lease_lost');
      assert.deepEqual(contents(b.store, 't1'), mirrored, "B's mirror is unchanged");
      assert.deepEqual(await taskRow(url, 't1'), held, 'the head at the authority is unchanged');
      assert.equal(await eventRows(url), 2);
    }));

  it('after the lease lapses and another Host claims the Task, the old holder is fenced and the new one continues the chain', () =>
    twoHosts(async (a, b, url) => {
      await a.store.append(input('t1', 0, 'a1'));
      const last = await a.store.append(input('t1', 1, 'a2'));
      await expireLeases(url, 'host-a');
      assert.deepEqual(await b.history!.claim(), [{ taskId: 't1', epoch: 2 }]);
      await b.store.copyIn(await b.history!.copyTask('t1'));

      // A has not renewed, so it still believes it holds epoch 1: the authority's fence refuses it.
      assert.equal(a.history!.holds('t1'), true);
      await assert.rejects(a.store.append(input('t1', 2, 'a3')), (e) => code(e) === 'lease_lost');
      assert.equal(await eventRows(url), 2, 'nothing written at the authority');
      assert.deepEqual(a.store.head('t1'), { revision: 2, digest: last.digest }, "nothing written in A's mirror");
      assert.equal(a.store.event('t1', 3), undefined);
      assert.equal(a.history!.holds('t1'), false, 'A forgets the lease it lost');

      const next = await b.store.append(input('t1', 2, 'b3'));
      assert.equal(next.revision, 3);
      assert.equal(b.store.event('t1', 3)?.prev, last.digest);
      assert.deepEqual(await taskRow(url, 't1'), {
        revision: 3,
        digest: next.digest,
        lease_owner: 'host-b',
        lease_epoch: 2,
      });
      const { rows } = await sql(
        url,
        `SELECT host_id, lease_epoch::int FROM ordivon_events WHERE task_id = 't1' ORDER BY revision`,
      );
      assert.deepEqual(rows, [
        { host_id: 'host-a', lease_epoch: 1 },
        { host_id: 'host-a', lease_epoch: 1 },
        { host_id: 'host-b', lease_epoch: 2 },
      ]);
    }));

  it("refuses an exclusive claim another Host's Task holds with identity_conflict, and lets one of two racing appends win", () =>
    twoHosts(async (a, b, url) => {
      const claim = (key: string) => ({ claims: [{ kind: 'request' as const, key }] });
      await a.store.append(input('ta', 0, 'e1', claim('r-1')));
      await assert.rejects(b.store.append(input('tb', 0, 'e1', claim('r-1'))), (e) => code(e) === 'identity_conflict');
      assert.equal(b.store.head('tb'), undefined);
      assert.deepEqual(b.store.owners('request', 'r-1'), []);
      assert.equal(await taskRow(url, 'tb'), undefined, 'no row for the refused Task at the authority');

      const raced = await Promise.allSettled([
        a.store.append(input('xa', 0, 'e1', claim('r-2'))),
        b.store.append(input('xb', 0, 'e1', claim('r-2'))),
      ]);
      assert.equal(raced.filter((r) => r.status === 'fulfilled').length, 1);
      const lost = raced.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
      assert.equal(code(lost.reason), 'identity_conflict');
      const winner = raced[0].status === 'fulfilled' ? 'xa' : 'xb';
      const loser = winner === 'xa' ? b : a;
      assert.equal(loser.store.head(winner === 'xa' ? 'xb' : 'xa'), undefined);
      const { rows } = await sql(url, `SELECT task_id FROM ordivon_claims WHERE kind = 'request' AND key = 'r-2'`);
      assert.deepEqual(rows, [{ task_id: winner }]);
      assert.equal(await eventRows(url), 2);
    }));

  it('acknowledges a retry by event id when the first commit reached the authority but not the mirror', () =>
    twoHosts(async (a, _b, url) => {
      const first = await a.store.append(input('t1', 0, 'e1'));
      const retried = input('t1', 1, 'e2');
      const record: EventRecord = { ...retried.event, prev: first.digest };
      const digest = digestOf(record);
      // What store.append sends, committed at the authority only: as if the Host failed before its mirror write.
      assert.deepEqual(
        await a.history!.commit({
          taskId: 't1',
          expectedRevision: 1,
          revision: 2,
          record,
          digest,
          objects: [],
          blobs: [],
          claims: [],
          projection: retried.projection,
        }),
        { duplicate: false },
      );
      assert.equal(a.store.head('t1')?.revision, 1);

      assert.deepEqual(await a.store.append(retried), { revision: 2, digest, duplicate: true });
      assert.deepEqual(a.store.head('t1'), { revision: 2, digest }, 'the mirror now holds the event');
      assert.equal(a.store.event('t1', 2)?.id, 'e2');
      assert.equal(await eventRows(url), 2);
      assert.deepEqual(await taskRow(url, 't1'), { revision: 2, digest, lease_owner: 'host-a', lease_epoch: 1 });
    }));

  it('refuses storage_failed (retryable) a retry whose event id the authority holds under another record, writing nothing into the mirror', () =>
    twoHosts(async (a, _b, url) => {
      const first = await a.store.append(input('t1', 0, 'e1'));
      const retried = input('t1', 1, 'e2');
      // The first attempt, taken at the authority only, at another time: another record under the same id.
      const earlier: EventRecord = { ...retried.event, at: '2025-12-31T23:59:59.000Z', prev: first.digest };
      await a.history!.commit({
        taskId: 't1',
        expectedRevision: 1,
        revision: 2,
        record: earlier,
        digest: digestOf(earlier),
        objects: [],
        blobs: [],
        claims: [],
        projection: retried.projection,
      });
      await assert.rejects(a.store.append(retried), (e) => code(e) === 'storage_failed' && (e as StoreError).retryable);
      assert.equal(a.store.head('t1')?.revision, 1, 'the mirror is left for the Host to copy again');
      assert.equal(await eventRows(url), 2);
    }));

  it('a Task copied from the authority into a fresh mirror is byte for byte the one its Host wrote, and rebuilds', async () => {
    const first = await backend.open({ hostId: 'host-c', kinds: OBJECT_KINDS });
    const url = first.url!;
    const root = tempDir();
    const sup = createSupervisor({ state: root, store: url, cluster: { hostId: 'host-a', leaseMs: 600_000 } });
    await sup.start();
    let taskId: string;
    try {
      ({ taskId } = await sup.createTask({ ...SPEC, taskId: 'task-1' }));
      const run = await driveToRunning(sup, taskId, 1);
      await observeRun(sup, taskId, 1, run, { 'diagnosis.json': '{"location":"alloc.js:12"}' });
    } finally {
      await sup.stop();
    }
    const written = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
    try {
      const fresh = first.store;
      await fresh.copyIn(await first.history!.copyTask(taskId));
      const expected = contents(written, taskId);
      assert.ok(Object.keys(expected.blobs).length > 0, 'the Task carries artifact bytes');
      assert.ok(expected.claims.length > 0, 'the Task holds identity claims');
      assert.deepEqual(contents(fresh, taskId), expected);

      const rebuilt = rebuildTask(fresh, taskId);
      assert.deepEqual(rebuilt.findings, []);
      assert.deepEqual(rebuilt.task, rebuildTask(written, taskId).task);
    } finally {
      await written.close();
      await first.close();
    }
  });

  for (const [what, doctored, by] of [
    ['a record whose digest no longer matches', `jsonb_set(record::jsonb, '{mono}', '99')::text`, 'copyIn'],
    ['a record that is not JSON', `'{"id":'`, 'copyTask'],
  ] as const) {
    it(`refuses ${what} with record_corrupt (${by}) and writes nothing into the mirror`, () =>
      twoHosts(async (a, b, url) => {
        const note = a.store.prepareObject({ kind: 'note', body: { text: 'hello' } });
        await a.store.append(
          input('t1', 0, 'e1', {
            event: testEvent('e1', [note.digest]),
            objects: [{ kind: 'note', body: { text: 'hello' } }],
            claims: [{ kind: 'request', key: 'r-1' }],
          }),
        );
        await a.store.append(input('t1', 1, 'e2'));
        await a.store.append(input('t1', 2, 'e3'));
        await sql(url, `UPDATE ordivon_events SET record = ${doctored} WHERE task_id = 't1' AND revision = 2`);

        await assert.rejects(
          (async () => b.store.copyIn(await b.history!.copyTask('t1')))(),
          (e) => code(e) === 'record_corrupt',
        );
        assert.deepEqual(contents(b.store, 't1'), {
          events: [],
          head: undefined,
          projection: undefined,
          claims: [],
          objects: {},
          blobs: {},
        });
        assert.deepEqual(b.store.taskIds(), []);
      }));
  }

  it('renew reports the Tasks another Host took; release lets another Host claim at once; every acquisition is logged with a higher epoch and the head it was acquired at', () =>
    twoHosts(async (a, b, url) => {
      await a.store.append(input('t1', 0, 'e1'));
      await a.store.append(input('t2', 0, 'e1'));
      assert.deepEqual(await a.history!.renew(), []);

      await expireLeases(url, 'host-a', 't1');
      assert.deepEqual(await b.history!.claim(), [{ taskId: 't1', epoch: 2 }]);
      assert.deepEqual(await a.history!.renew(), ['t1']);
      assert.deepEqual(a.history!.leases(), [{ taskId: 't2', epoch: 1 }]);

      // A live lease is not taken; a released one is, without waiting for it to run out.
      assert.deepEqual(await b.history!.claim(), []);
      await a.history!.release(['t2']);
      assert.deepEqual(await b.history!.claim(), [{ taskId: 't2', epoch: 2 }]);
      assert.equal(await a.history!.owner('t2'), 'host-b');

      await b.history!.release(['t1']);
      assert.deepEqual(await a.history!.claim(), [{ taskId: 't1', epoch: 3 }]);
      const { rows } = await sql(
        url,
        `SELECT task_id, lease_epoch::int, host_id, revision::int FROM ordivon_lease_log ORDER BY task_id, lease_epoch`,
      );
      // With the head each lease was acquired at: a new stream's at 0, before its first event.
      assert.deepEqual(rows, [
        { task_id: 't1', lease_epoch: 1, host_id: 'host-a', revision: 0 },
        { task_id: 't1', lease_epoch: 2, host_id: 'host-b', revision: 1 },
        { task_id: 't1', lease_epoch: 3, host_id: 'host-a', revision: 1 },
        { task_id: 't2', lease_epoch: 1, host_id: 'host-a', revision: 0 },
        { task_id: 't2', lease_epoch: 2, host_id: 'host-b', revision: 1 },
      ]);
    }));

  /** A store on a fresh database, and a TCP proxy in front of the database's server (`proxied`: the URL through it). */
  async function behindProxy() {
    const direct = await backend.open({ hostId: 'host-direct' });
    const url = direct.url!;
    const proxy = await startProxy(Number(new URL(url).port));
    const proxied = new URL(url);
    proxied.port = String(proxy.port);
    return { direct, url, proxy, proxied };
  }

  it('a copy cut off by a partition leaves no broken connection in the pool: after the partition heals the next copy works (regression: the timed-out client went back to the pool)', async () => {
    const { direct, proxy, proxied } = await behindProxy();
    // One connection, so the copy after the partition gets the one the partition cut off, unless it was dropped.
    const history = await PgHistory.open({
      url: proxied.toString(),
      hostId: 'host-a',
      poolSize: 1,
      statementTimeoutMs: 1_000,
    });
    try {
      await direct.store.append(input('t1', 0, 'e1'));
      proxy.blackhole();
      await assert.rejects(history.copyTask('t1'), (e) => code(e) === 'storage_failed');
      proxy.heal();
      const copy = await history.copyTask('t1');
      assert.deepEqual(
        copy.events.map((e) => e.revision),
        [1],
      );
    } finally {
      await proxy.close();
      await history.close();
      await direct.close();
    }
  });

  it('an append over a blackholed connection fails storage_failed (retryable) at the statement timeout and writes nothing into the mirror', async () => {
    const { direct, url, proxy, proxied } = await behindProxy();
    const host = await backend.open({ url: proxied.toString(), hostId: 'host-a', statementTimeoutMs: 1_000 });
    try {
      const first = await host.store.append(input('t1', 0, 'e1'));
      proxy.blackhole();
      await assert.rejects(
        host.store.append(input('t1', 1, 'e2')),
        (e) => code(e) === 'storage_failed' && (e as { retryable?: boolean }).retryable === true,
      );
      assert.deepEqual(host.store.head('t1'), { revision: 1, digest: first.digest });
      assert.equal(host.store.event('t1', 2), undefined);
      assert.equal(await eventRows(url), 1, 'nothing reached the authority either');
    } finally {
      await proxy.close();
      await host.close();
      await direct.close();
    }
  });
});
