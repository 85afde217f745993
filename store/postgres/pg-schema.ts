import type pg from 'pg';
import { z } from 'zod';
import { StoreError } from '../errors.js';
import { withClient } from './pg-pool.js';
import { SCHEMA_SQL, SCHEMA_UPGRADES, SCHEMA_VERSION } from './schema.js';

const MetaRow = z.object({ value: z.string() });

/**
 * Uses a database already at this schema version as it is, creates the tables in an empty one,
 * and refuses (`format_unknown`) one at another version before touching it. The DDL runs only on
 * a database without a schema: `CREATE INDEX IF NOT EXISTS` takes its table's SHARE lock even when
 * the index exists, so a Host re-running it while others append would deadlock with them and
 * fail to start.
 */
export async function ensureSchema(pool: pg.Pool): Promise<void> {
  let version = await schemaVersion(pool);
  if (version === undefined) {
    await createSchema(pool);
    version = await schemaVersion(pool);
  }
  if (version !== undefined && SCHEMA_UPGRADES[Number(version)] !== undefined) {
    await upgradeSchema(pool);
    version = await schemaVersion(pool);
  }
  if (version !== String(SCHEMA_VERSION))
    throw new StoreError('format_unknown', `the database has schema ${version}; this Host reads ${SCHEMA_VERSION}`);
}

/** The schema version the database records; undefined when it has no ordivon_meta table or no version in it. */
async function schemaVersion(pool: pg.Pool): Promise<string | undefined> {
  try {
    const { rows } = await pool.query(`SELECT value FROM ordivon_meta WHERE name = 'schema'`);
    return rows.length === 0 ? undefined : MetaRow.parse(rows[0]).value;
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') return undefined; // undefined_table
    throw error;
  }
}

async function createSchema(pool: pg.Pool): Promise<void> {
  await withClient(pool, async (client) => {
    // One creator at a time: Hosts starting together on an empty database would otherwise race
    // in CREATE … IF NOT EXISTS. A transaction-scoped lock, for the DDL only (fencing never uses one).
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(7070701)');
    await client.query(SCHEMA_SQL);
    await client.query(`INSERT INTO ordivon_meta (name, value) VALUES ('schema', $1) ON CONFLICT (name) DO NOTHING`, [
      String(SCHEMA_VERSION),
    ]);
    await client.query('COMMIT');
  });
}

/**
 * Takes a database of an older version up to this one, step by step, under the creators' lock
 * (a Host starting beside it waits, then finds the version current). The version is read again
 * under the lock: another Host may have upgraded it meanwhile.
 */
async function upgradeSchema(pool: pg.Pool): Promise<void> {
  await withClient(pool, async (client) => {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(7070701)');
    const { rows } = await client.query(`SELECT value FROM ordivon_meta WHERE name = 'schema' FOR UPDATE`);
    let version = Number(MetaRow.parse(rows[0]).value);
    for (let step = SCHEMA_UPGRADES[version]; step !== undefined; step = SCHEMA_UPGRADES[version]) {
      await client.query(step);
      version++;
    }
    await client.query(`UPDATE ordivon_meta SET value = $1 WHERE name = 'schema'`, [String(version)]);
    await client.query('COMMIT');
  });
}
