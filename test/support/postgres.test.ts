import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { createDatabase, postgresPart, startPostgres } from './postgres.js';

// A real server: Debian's postgresql, which .ci/run installs; skipped with the reason elsewhere.
const PG = postgresPart();

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

describe('startPostgres: a PostgreSQL server of its own for a test', { timeout: 180_000 }, () => {
  it(
    'keeps a table and its rows, runs with fsync on and not as root; stop() ends it and removes its directory',
    { skip: PG.skip },
    async () => {
      PG.need();
      const server = await startPostgres();
      try {
        assert.equal(server.url, `postgres://ordivon@127.0.0.1:${server.port}/ordivon`);
        await withClient(server.url, async (client) => {
          await client.query('CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)');
          await client.query('INSERT INTO notes VALUES ($1, $2), ($3, $4)', [1, 'one', 2, 'twö']);
          const { rows } = await client.query('SELECT id, body FROM notes ORDER BY id');
          assert.deepEqual(rows, [
            { id: 1, body: 'one' },
            { id: 2, body: 'twö' },
          ]);
          const facts = await client.query(
            "SELECT current_user AS who, current_database() AS db, current_setting('fsync') AS fsync, current_setting('server_encoding') AS encoding",
          );
          assert.deepEqual(facts.rows[0], { who: 'ordivon', db: 'ordivon', fsync: 'on', encoding: 'UTF8' });
        });
        assert.notEqual(statSync(join(server.dir, 'data')).uid, 0, 'the cluster belongs to a non-root account');
      } finally {
        await server.stop();
      }
      assert.equal(existsSync(server.dir), false);
      await assert.rejects(
        withClient(server.url, async () => {}),
        { code: 'ECONNREFUSED' },
      );
    },
  );

  it('runs two servers at once, each with its own data', { skip: PG.skip }, async () => {
    PG.need();
    const [a, b] = await Promise.all([startPostgres(), startPostgres()]);
    try {
      assert.notEqual(a.port, b.port);
      assert.notEqual(a.dir, b.dir);
      for (const [server, mark] of [
        [a, 'a'],
        [b, 'b'],
      ] as const) {
        await withClient(server.url, async (client) => {
          await client.query('CREATE TABLE marks (mark text)');
          await client.query('INSERT INTO marks VALUES ($1)', [mark]);
        });
      }
      for (const [server, mark] of [
        [a, 'a'],
        [b, 'b'],
      ] as const) {
        const { rows } = await withClient(server.url, (client) => client.query('SELECT mark FROM marks'));
        assert.deepEqual(rows, [{ mark }]);
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it(
    'createDatabase gives a fresh database on the same server; settings reach the server',
    { skip: PG.skip },
    async () => {
      PG.need();
      const server = await startPostgres({ settings: { max_connections: 20 } });
      try {
        const url = await createDatabase(server.url, 'Suite one-db');
        assert.equal(url, `postgres://ordivon@127.0.0.1:${server.port}/Suite%20one-db`);
        await withClient(url, async (client) => {
          assert.equal((await client.query('SELECT current_database() AS db')).rows[0].db, 'Suite one-db');
          await client.query('CREATE TABLE only_here (x int)');
        });
        await withClient(server.url, async (client) => {
          const { rows } = await client.query(
            "SELECT to_regclass('public.only_here') AS t, current_setting('max_connections') AS max",
          );
          assert.deepEqual(rows[0], { t: null, max: '20' });
        });
        await assert.rejects(createDatabase(server.url, 'Suite one-db'), /already exists/);
      } finally {
        await server.stop();
      }
    },
  );
});
