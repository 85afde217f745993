import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { CLAIM_BATCH } from '../../kernel/cluster/cluster.js';
import { createSupervisor } from '../../kernel/supervisor.js';
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
  it('does not serve a Task its keeper round claimed when the lease was lost before the round got to it (regression: it was adopted, then answered lease_lost)', async () => {
    const url = await createDatabase(server().url, 'keeper_lost_meanwhile');
    const admin = new pg.Pool({ connectionString: url, max: 2 });
    const a = createSupervisor({
      state: tempDir(),
      store: url,
      cluster: { hostId: 'host-a', leaseMs: 600_000, renewEveryMs: 50 },
    });
    // host-b's keeper stays quiet: only this test moves its leases.
    const b = createSupervisor({
      state: tempDir(),
      store: url,
      cluster: { hostId: 'host-b', leaseMs: 600_000, renewEveryMs: 600_000 },
    });
    await a.start();
    await b.start();
    const blocker = await admin.connect();
    const expire = (taskId: string) =>
      admin.query(`UPDATE ordivon_tasks SET lease_until = now() - interval '1 second' WHERE task_id = $1`, [taskId]);
    try {
      await b.createTask({ ...SPEC, taskId: 'lost-meanwhile' });
      await b.createTask({ ...SPEC, taskId: 'claimed-later' });
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE ordivon_task_objects IN ACCESS EXCLUSIVE MODE');
      await expire('lost-meanwhile');
      await until('host-a claimed lost-meanwhile', 30_000, async () => a.history!.holds('lost-meanwhile') || undefined);

      // While host-a's round is stuck in the copy, a third Host takes the Task, and host-a's renewer learns it.
      await admin.query(
        `UPDATE ordivon_tasks SET lease_owner = 'host-z', lease_epoch = lease_epoch + 1 WHERE task_id = 'lost-meanwhile'`,
      );
      await until(
        'host-a dropped lost-meanwhile',
        30_000,
        async () => !a.history!.holds('lost-meanwhile') || undefined,
      );
      await expire('claimed-later');
      await blocker.query('ROLLBACK');

      // The next round (which claims claimed-later) starts only after the stuck one is over.
      await until('host-a serves claimed-later', 30_000, async () => a.getTask('claimed-later') && true);
      assert.equal(a.getTask('lost-meanwhile'), undefined);
      const elsewhere = await a.send('lost-meanwhile', { type: 'task.cancel', reason: 'wrong Host' });
      assert.equal(elsewhere.code, 'task_elsewhere');
      assert.match(elsewhere.detail ?? '', /host-z/);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      blocker.release();
      await Promise.all([a.stop(), b.stop()]);
      await admin.end();
    }
  });
  it('takes free Tasks CLAIM_BATCH at a time: one batch at boot, then batch after batch in one keeper round until a batch comes back short', async () => {
    const url = await createDatabase(server().url, 'keeper_batches');
    // Quiet keepers: only the rounds this test runs claim.
    const cluster = (hostId: string) => ({ hostId, leaseMs: 600_000, renewEveryMs: 600_000 });
    const b = createSupervisor({ state: tempDir(), store: url, cluster: cluster('host-b') });
    await b.start();
    // Two full batches and a short one after the boot's: a round that stopped after one batch
    // would leave a dead Host's Tasks unserved for a renewal interval per batch.
    const count = 3 * CLAIM_BATCH + 3;
    for (let i = 0; i < count; i++) await b.createTask({ ...SPEC, taskId: `task-${i}` });
    await b.stop();

    const a = createSupervisor({ state: tempDir(), store: url, cluster: cluster('host-a') });
    await a.start();
    try {
      assert.equal(a.listTasks().length, CLAIM_BATCH, 'a boot claims one batch');
      await a.clusterTick();
      assert.equal(a.listTasks().length, count, 'one round takes the rest');
    } finally {
      await a.stop();
    }
  });
});
