import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSupervisor } from '../../../kernel/supervisor.js';
import { StoreError } from '../../../store/index.js';
import { PgHistory, SCHEMA_VERSION } from '../../../store/postgres/index.js';
import { SPEC } from '../../support/tasks.js';
import { createDatabase, postgresPart, sharedPostgres, sql } from '../../support/postgres.js';
import { startProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { tempDir } from '../../support/temp.js';

const part = postgresPart();

/** `url` with its port replaced by the proxy's. */
function through(url: string, proxy: TcpProxy): string {
  const proxied = new URL(url);
  proxied.port = String(proxy.port);
  return proxied.toString();
}

const storageFailed = (error: unknown) => error instanceof StoreError && error.code === 'storage_failed';

describe('PgHistory when its connections fail', { skip: part.skip }, () => {
  const server = sharedPostgres();
  let url: string;
  let proxy: TcpProxy;
  before(async () => {
    url = await createDatabase(server().url, 'faults');
    const writer = createSupervisor({ state: tempDir(), store: url, cluster: { hostId: 'writer', leaseMs: 600_000 } });
    await writer.start();
    await writer.createTask({ ...SPEC, taskId: 'task-1' });
    await writer.stop();
    const target = new URL(url);
    proxy = await startProxy(Number(target.port), target.hostname);
  });
  after(() => proxy?.close());

  it('a reset under a checked-out connection (a snapshot read in flight) fails that read storage_failed and the process lives on (regression: an unhandled error event on the Client)', async () => {
    const history = await PgHistory.open({ url: through(url, proxy), hostId: 'reader', notify: false });
    try {
      assert.equal((await history.readTask('task-1'))?.taskId, 'task-1');
      // The read's BEGIN is sent and swallowed: the connection is checked out of the pool, waiting.
      proxy.blackhole();
      const dropped = proxy.dropped;
      const read = history.readTask('task-1');
      await proxy.whenDropped(dropped + 1);
      assert.ok(proxy.reset() > 0, 'there were connections to reset');
      proxy.heal();
      await assert.rejects(read, storageFailed);
      // Every pooled connection was reset: new ones are opened, and the history reads and writes again.
      assert.equal((await history.readTask('task-1'))?.events.length, 1);
      await history.heartbeat();
    } finally {
      proxy.heal();
      await history.close();
    }
  });

  it('publishes the advertised URL beside the heartbeat, and names it with the Task’s owner', async () => {
    const db = await createDatabase(server().url, 'advertise');
    const host = createSupervisor({
      state: tempDir(),
      store: db,
      cluster: { hostId: 'host-a', leaseMs: 600_000, advertisedUrl: 'http://host-a.example:7420' },
    });
    await host.start();
    const other = await PgHistory.open({ url: db, hostId: 'host-b', notify: false });
    try {
      await host.createTask({ ...SPEC, taskId: 'on-a' });
      assert.deepEqual(await other.ownerAndUrl('on-a'), { owner: 'host-a', url: 'http://host-a.example:7420' });
      await host.history!.advertise('http://10.0.0.7:9000');
      assert.deepEqual(await other.ownerAndUrl('on-a'), { owner: 'host-a', url: 'http://10.0.0.7:9000' });
      assert.equal(await other.ownerAndUrl('none'), undefined);
      // A send to another Host names both.
      const b = createSupervisor({ state: tempDir(), store: db, cluster: { hostId: 'host-b', leaseMs: 600_000 } });
      await b.start();
      try {
        const refused = await b.send('on-a', { type: 'task.cancel', reason: 'x' });
        assert.deepEqual(
          [refused.code, refused.host, refused.url, refused.written],
          ['task_elsewhere', 'host-a', 'http://10.0.0.7:9000', false],
        );
      } finally {
        await b.stop();
      }
    } finally {
      await other.close();
      await host.stop();
    }
  });

  it(`upgrades a database of schema 1 to ${SCHEMA_VERSION} in place (the advertised_url column), keeping its rows; a database at another version is still refused`, async () => {
    const db = await createDatabase(server().url, 'upgrade');
    const writer = createSupervisor({ state: tempDir(), store: db, cluster: { hostId: 'old', leaseMs: 600_000 } });
    await writer.start();
    await writer.createTask({ ...SPEC, taskId: 'kept' });
    await writer.stop();
    // What a version-1 Host left: no column, version 1.
    await sql(db, `ALTER TABLE ordivon_hosts DROP COLUMN advertised_url`);
    await sql(db, `UPDATE ordivon_meta SET value = '1' WHERE name = 'schema'`);
    const history = await PgHistory.open({ url: db, hostId: 'new', notify: false, advertisedUrl: 'http://new:1' });
    try {
      const meta = await sql(db, `SELECT value FROM ordivon_meta WHERE name = 'schema'`);
      assert.equal(meta.rows[0].value, String(SCHEMA_VERSION));
      const hosts = await sql(db, `SELECT host_id, advertised_url FROM ordivon_hosts ORDER BY host_id`);
      assert.deepEqual(
        hosts.rows.map((r) => [r.host_id, r.advertised_url]),
        [
          ['new', 'http://new:1'],
          ['old', null],
        ],
      );
      assert.equal((await history.readTask('kept'))?.events.length, 1);
    } finally {
      await history.close();
    }
    await sql(db, `UPDATE ordivon_meta SET value = '0' WHERE name = 'schema'`);
    await assert.rejects(
      PgHistory.open({ url: db, hostId: 'new', notify: false }),
      (error: unknown) => error instanceof StoreError && error.code === 'format_unknown',
    );
  });
});

describe('TaskWatch reconnecting its LISTEN connection', { skip: part.skip }, () => {
  const server = sharedPostgres();

  it('waits twice as long after each failed attempt, and starts over once it listens again; the poll after it reports what was missed', async () => {
    const url = await createDatabase(server().url, 'backoff');
    const writer = createSupervisor({ state: tempDir(), store: url, cluster: { hostId: 'writer', leaseMs: 600_000 } });
    await writer.start();
    const history = await PgHistory.open({ url, hostId: 'watcher', notify: false });
    const delays: number[] = [];
    let listening = 0;
    const heard: string[] = [];
    let waiters: Array<() => void> = [];
    const changed = () => {
      for (const wake of waiters) wake();
      waiters = [];
    };
    const when = async (test: () => boolean) => {
      while (!test()) await new Promise<void>((resolve) => waiters.push(resolve));
    };
    const watch = history.watch({
      pollMs: 600_000,
      reconnectMs: 20,
      reconnectMaxMs: 80,
      onReconnectScheduled: (ms) => (delays.push(ms), changed()),
      onListening: () => (listening++, changed()),
      onCommits: (c) => (heard.push(c.taskId), changed()),
    });
    const admin = (text: string) => sql(server().url, text);
    const kill = () =>
      admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ordivon-listen:watcher'`);
    try {
      await watch.start();
      await admin(`ALTER DATABASE backoff ALLOW_CONNECTIONS false`);
      await kill();
      // Lost, then three refused attempts: 20, 40, 80, and no more than the cap after.
      await when(() => delays.length >= 5);
      assert.deepEqual(delays.slice(0, 5), [20, 40, 80, 80, 80]);
      await writer.createTask({ ...SPEC, taskId: 'while-away' });
      await admin(`ALTER DATABASE backoff ALLOW_CONNECTIONS true`);
      await when(() => listening === 2 && heard.includes('while-away'));
      const before = delays.length;
      await kill();
      await when(() => delays.length > before);
      assert.equal(delays[before], 20, 'a listener that listened again starts its backoff over');
    } finally {
      await admin(`ALTER DATABASE backoff ALLOW_CONNECTIONS true`).catch(() => undefined);
      await watch.close();
      await history.close();
      await writer.stop();
    }
  });
});
