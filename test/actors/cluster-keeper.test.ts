import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { createSupervisor } from '../../actors/supervisor.js';
import { SPEC } from '../support/tasks.js';
import { createDatabase, postgresPart, sharedPostgres } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';

const part = postgresPart();

describe('the cluster keeper', { skip: part.skip }, () => {
  const server = sharedPostgres();

  it('keeps renewing the leases a Host holds while a keeper round is stuck copying a Task it took over (regression: renewal waited behind adoption)', async () => {
    const url = await createDatabase(server().url, 'keeper_renews');
    const admin = new pg.Pool({ connectionString: url, max: 2 });
    // A long lease (only this test moves lease_until) and a quick keeper.
    const cluster = (hostId: string) => ({ hostId, leaseMs: 600_000, renewEveryMs: 50 });
    const a = createSupervisor({ state: tempDir(), store: url, cluster: cluster('host-a') });
    const b = createSupervisor({ state: tempDir(), store: url, cluster: cluster('host-b') });
    await a.start();
    await b.start();
    const blocker = await admin.connect();
    try {
      await a.createTask({ ...SPEC, taskId: 'held-by-a' });
      await b.createTask({ ...SPEC, taskId: 'moves-to-a' });
      // Copying a Task reads ordivon_task_objects: held here, host-a's keeper round that claims
      // `moves-to-a` stops in the copy until the lock goes.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE ordivon_task_objects IN ACCESS EXCLUSIVE MODE');
      await b.stop();
      await until('host-a claimed moves-to-a', 30_000, async () => {
        const { rows } = await admin.query(`SELECT lease_owner FROM ordivon_tasks WHERE task_id = 'moves-to-a'`);
        return rows[0]?.lease_owner === 'host-a' ? true : undefined;
      });

      // As if renewal had lagged: host-a's other lease ran out. Renewing takes it back (same epoch).
      await admin.query(
        `UPDATE ordivon_tasks SET lease_until = now() - interval '1 second' WHERE task_id = 'held-by-a'`,
      );
      await until('host-a renewed held-by-a while its keeper round is stuck', 30_000, async () => {
        const { rows } = await admin.query(
          `SELECT lease_until > now() AS live FROM ordivon_tasks WHERE task_id = 'held-by-a'`,
        );
        return rows[0]?.live === true ? true : undefined;
      });
      assert.equal(a.getTask('moves-to-a'), undefined, 'the keeper round is still in the copy');

      await blocker.query('ROLLBACK');
      await until('host-a serves moves-to-a', 30_000, async () => a.getTask('moves-to-a') && true);
      assert.equal((await a.send('held-by-a', { type: 'task.cancel', reason: 'still held' })).written, true);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      blocker.release();
      await Promise.all([a.stop(), b.stop()]);
      await admin.end();
    }
  });
});
