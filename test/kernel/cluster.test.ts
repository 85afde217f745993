import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { createSupervisor, type Supervisor } from '../../kernel/supervisor.js';
import { NO_STATE } from '../../kernel/send-result.js';
import { SPEC, driveToRunning } from '../support/tasks.js';
import { createDatabase, postgresPart, sharedPostgres } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';

const part = postgresPart();

/** Two (or more) Hosts on one database, each with its own state root (its mirror). */
async function host(url: string, hostId: string): Promise<Supervisor> {
  // A long lease: only the test moves leases (by hand in SQL, or by stopping a Host).
  const sup = createSupervisor({ state: tempDir(), store: url, cluster: { hostId, leaseMs: 600_000 } });
  await sup.start();
  return sup;
}

/** Runs one statement on its own connection. */
async function sql(url: string, text: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** Ends every lease `hostId` holds now, as if it had stopped renewing long ago (database clock). */
async function expireLeases(url: string, hostId: string): Promise<void> {
  await sql(url, `UPDATE ordivon_tasks SET lease_until = now() - interval '1 second' WHERE lease_owner = $1`, [hostId]);
}

describe('many Hosts on one PostgreSQL database', { skip: part.skip }, () => {
  const server = sharedPostgres();

  it('a Task created on one Host is served there only; another Host answers task_elsewhere naming it', async () => {
    const url = await createDatabase(server().url, 'elsewhere');
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    try {
      const { taskId } = await a.createTask({ ...SPEC, taskId: 'task-1' });
      const refused = await b.send(taskId, { type: 'task.cancel', reason: 'from b' });
      assert.equal(refused.written, false);
      assert.equal(refused.code, 'task_elsewhere');
      assert.match(refused.detail ?? '', /host-a/);
      // Neither Host's refusal makes up a state: one NO_STATE for a Task this Host holds none of.
      assert.deepEqual([refused.kind, refused.revision, refused.state], ['refused', 0, NO_STATE]);
      assert.equal(b.getTask(taskId), undefined);
      const unknown = await b.send('no-such-task', { type: 'task.cancel', reason: 'x' });
      assert.equal(unknown.code, 'task_not_found');
      assert.deepEqual([unknown.kind, unknown.revision, unknown.state], ['refused', 0, NO_STATE]);
      // The id is taken in the whole cluster: the database refuses a second stream for it.
      await assert.rejects(b.createTask({ ...SPEC, taskId }), (e) => (e as { code?: string }).code === 'task_exists');
      assert.equal(b.getTask(taskId), undefined);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('a Host whose lease lapsed is fenced: its append is refused lease_lost, writes nothing, and the Task moves to the Host that claimed it', async () => {
    const url = await createDatabase(server().url, 'fenced');
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    try {
      const { taskId } = await a.createTask({ ...SPEC, taskId: 'task-2' });
      await driveToRunning(a, taskId, 1);
      const before = a.getTask(taskId)!;

      await expireLeases(url, 'host-a');
      await b.clusterTick();
      const moved = b.getTask(taskId);
      assert.ok(moved, 'host-b serves the Task after claiming it');
      assert.equal(moved.revision, before.revision);
      assert.equal(moved.state, before.state);
      assert.deepEqual(moved.context, before.context);

      // host-a has not noticed yet (no keeper round): its write is fenced by the epoch.
      const stale = await a.send(taskId, { type: 'task.cancel', reason: 'stale host' });
      assert.equal(stale.written, false);
      assert.equal(stale.code, 'lease_lost');
      assert.equal(a.getTask(taskId), undefined, 'host-a stops serving the Task at once');

      const fresh = await b.send(taskId, { type: 'task.cancel', reason: 'new owner' });
      assert.equal(fresh.written, true);
      assert.equal(fresh.revision, before.revision + 1);
      assert.deepEqual(
        b.events(taskId).map((e) => e.revision),
        Array.from({ length: before.revision + 1 }, (_, i) => i + 1),
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('a keeper round tells a Host which Tasks another Host took; a clean stop hands its Tasks over at once', async () => {
    const url = await createDatabase(server().url, 'handover');
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    try {
      await a.createTask({ ...SPEC, taskId: 'task-3' });
      await a.createTask({ ...SPEC, taskId: 'task-4' });
      await expireLeases(url, 'host-a');
      await b.clusterTick();
      await a.clusterTick();
      assert.deepEqual(a.listTasks(), []);
      assert.deepEqual(
        b
          .listTasks()
          .map((t) => t.taskId)
          .sort(),
        ['task-3', 'task-4'],
      );

      await b.stop();
      await a.clusterTick();
      assert.deepEqual(
        a
          .listTasks()
          .map((t) => t.taskId)
          .sort(),
        ['task-3', 'task-4'],
      );
      assert.equal((await a.send('task-3', { type: 'task.cancel', reason: 'back on a' })).written, true);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('a Host restarted on its old state root serves only the Tasks it holds again, each up to the shared head', async () => {
    const url = await createDatabase(server().url, 'restart');
    const rootA = tempDir();
    const a1 = createSupervisor({ state: rootA, store: url, cluster: { hostId: 'host-a', leaseMs: 600_000 } });
    await a1.start();
    await a1.createTask({ ...SPEC, taskId: 'task-5' });
    await a1.createTask({ ...SPEC, taskId: 'task-6' });
    await a1.stop();
    const b = await host(url, 'host-b');
    try {
      // host-b took both at its start (a1 released them); it moves task-5 on and gives task-6 back.
      assert.equal((await b.send('task-5', { type: 'task.cancel', reason: 'on b' })).written, true);
      await b.stop();
      const a2 = createSupervisor({ state: rootA, store: url, cluster: { hostId: 'host-a', leaseMs: 600_000 } });
      await a2.start();
      try {
        assert.equal(a2.getTask('task-5')?.state, 'cancelled', 'the mirror caught up with host-b’s commit');
        assert.equal(a2.getTask('task-5')?.revision, 2);
        assert.equal(a2.getTask('task-6')?.revision, 1);
      } finally {
        await a2.stop();
      }
      // The mirror is written only through the database: a Host on the embedded store is refused it.
      const embedded = createSupervisor({ state: rootA });
      await assert.rejects(embedded.start(), (e) => (e as { code?: string }).code === 'state_mirrored');
    } finally {
      await b.stop();
    }
  });

  it('a Task whose shared history does not check out is held but never served, and named with why', async () => {
    const url = await createDatabase(server().url, 'damaged');
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    try {
      await a.createTask({ ...SPEC, taskId: 'task-7' });
      assert.equal((await a.send('task-7', { type: 'task.cancel', reason: 'done' })).written, true);
      await sql(
        url,
        `UPDATE ordivon_events SET record = replace(record, '"done"', '"forged"') WHERE task_id = 'task-7' AND revision = 2`,
      );
      await expireLeases(url, 'host-a');
      await b.clusterTick();
      assert.equal(b.getTask('task-7'), undefined);
      const [problem, ...more] = b.clusterProblems();
      assert.deepEqual(more, []);
      assert.equal(problem?.taskId, 'task-7');
      assert.match(problem!.problem, /task-7 revision 2/);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
