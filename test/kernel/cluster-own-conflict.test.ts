import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSupervisor } from '../../kernel/supervisor.js';
import { SPEC } from '../support/tasks.js';
import { createDatabase, postgresPart, sharedPostgres, sql } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';

const part = postgresPart();

describe("a Host's own compare-and-set during a takeover", { skip: part.skip }, () => {
  const server = sharedPostgres();

  it('admits an external event that names no revision when the Host claimed the Task back before re-reading it (regression: a goal.revise answered revision_conflict)', async () => {
    const url = await createDatabase(server().url, 'own_conflict');
    // Quiet keepers: only this test moves leases, so each step of the takeover happens when it says.
    const quiet = (hostId: string) => ({ hostId, leaseMs: 600_000, renewEveryMs: 600_000 });
    const a = createSupervisor({ state: tempDir(), store: url, cluster: quiet('host-a') });
    const b = createSupervisor({ state: tempDir(), store: url, cluster: quiet('host-b') });
    await a.start();
    await b.start();
    const expire = (taskId: string) =>
      sql(url, `UPDATE ordivon_tasks SET lease_until = now() - interval '1 second' WHERE task_id = $1`, [taskId]);
    try {
      await b.createTask({ ...SPEC, taskId: 'moves' });
      // host-a takes the Task over and writes to it: host-b's copy stops at revision 1.
      await expire('moves');
      await a.clusterTick();
      assert.ok(a.getTask('moves'), 'host-a serves the Task it took over');
      const revised = await a.send('moves', { type: 'goal.revise', goal: 'narrower', reason: 'on host-a' });
      assert.equal(revised.written, true, JSON.stringify(revised));
      assert.equal(b.getTask('moves')?.revision, 1, "host-b's keeper has not run: it still serves its stale copy");

      // host-b claims the Task back at a new epoch, as its keeper round does before it copies and
      // rebuilds it: in that window its old actor (revision 1) appends under the new epoch.
      await expire('moves');
      const claimed = await b.history!.claim();
      assert.deepEqual(
        claimed.map((c) => c.taskId),
        ['moves'],
      );
      const sent = await b.send('moves', { type: 'goal.revise', goal: 'narrower still', reason: 'on host-b' });
      assert.deepEqual(
        [sent.admitted, sent.written, sent.code, sent.revision],
        [true, true, undefined, 3],
        JSON.stringify(sent),
      );
      const rows = await sql(url, `SELECT revision FROM ordivon_events WHERE task_id = 'moves' ORDER BY revision`);
      assert.deepEqual(
        rows.rows.map((r) => Number(r.revision)),
        [1, 2, 3],
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
