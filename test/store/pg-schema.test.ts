import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { PgHistory } from '../../store/postgres/index.js';
import { StoreError } from '../../store/index.js';
import { createDatabase, postgresPart, sharedPostgres } from '../support/postgres.js';

const part = postgresPart();

describe('PgHistory and the database schema', { skip: part.skip }, () => {
  const server = sharedPostgres();

  /** A transaction holding the table locks an append in flight holds (ordivon_append writes these tables). */
  async function appendInFlight(url: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('BEGIN');
    await client.query('LOCK TABLE ordivon_tasks, ordivon_events, ordivon_claims IN ROW EXCLUSIVE MODE');
    return client;
  }

  it('a Host joins a database at its schema version while another Host appends (regression: the schema DDL deadlocked with appends)', async () => {
    const url = await createDatabase(server().url, 'schema_busy');
    const first = await PgHistory.open({ url, hostId: 'host-a' });
    const busy = await appendInFlight(url);
    try {
      // Before the fix this waited for the SHARE lock of CREATE INDEX IF NOT EXISTS until the statement timeout.
      const second = await PgHistory.open({ url, hostId: 'host-b', statementTimeoutMs: 10_000 });
      await second.close();
    } finally {
      await busy.query('ROLLBACK');
      await busy.end();
      await first.close();
    }
  });

  it('refuses a database at another schema version with format_unknown, and changes nothing in it', async () => {
    const url = await createDatabase(server().url, 'schema_other');
    await (await PgHistory.open({ url, hostId: 'host-a' })).close();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`UPDATE ordivon_meta SET value = '99' WHERE name = 'schema'`);
      await admin.query('DROP FUNCTION ordivon_append');
      await assert.rejects(
        PgHistory.open({ url, hostId: 'host-b' }),
        (error: unknown) => error instanceof StoreError && error.code === 'format_unknown',
      );
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'ordivon_append'`);
      assert.equal(rows[0].n, 0, 'the schema of another version was not recreated');
    } finally {
      await admin.end();
    }
  });
});
