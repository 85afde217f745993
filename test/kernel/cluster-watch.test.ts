import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSupervisor, type Supervisor, type SupervisorOptions } from '../../kernel/supervisor.js';
import type { Committed } from '../../kernel/task-actor.js';
import { SPEC, driveToRunning } from '../support/tasks.js';
import { createDatabase, postgresPart, sharedPostgres, sql } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';

const part = postgresPart();

/** How long a test waits for a commit it expects before failing (a hang detector, not a speed limit). */
const DEADLINE_MS = 20_000;

/** A Host on `url`; a long lease (only the tests move leases) and, unless told, a poll only when the test ticks. */
async function host(url: string, hostId: string, cluster: SupervisorOptions['cluster'] = {}): Promise<Supervisor> {
  const sup = createSupervisor({
    state: tempDir(),
    store: url,
    cluster: { hostId, leaseMs: 600_000, pollMs: 600_000, ...cluster },
  });
  await sup.start();
  return sup;
}

/** Everything a Supervisor's subscribers hear, and a way to wait for one record. */
function listen(sup: Supervisor) {
  const heard: Committed[] = [];
  const waiting = new Set<() => void>();
  sup.subscribe((c) => {
    heard.push(c);
    for (const check of waiting) check();
  });
  return {
    heard,
    /** Resolves once a record matching `match` was heard; rejects after DEADLINE_MS. */
    until(match: (c: Committed) => boolean, what: string): Promise<Committed> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = heard.find(match);
          if (!found) return;
          waiting.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`not heard within ${DEADLINE_MS} ms: ${what}`));
        }, DEADLINE_MS);
        waiting.add(check);
        check();
      });
    },
  };
}

const ofTask = (records: Committed[], taskId: string) => records.filter((c) => c.taskId === taskId);

describe('other Hosts’ commits reach subscribers (the watch)', { skip: part.skip }, () => {
  const server = sharedPostgres();

  it('a subscriber on Host B hears every commit of a Task only A serves, once each, in revision order, as A’s own subscriber heard it, with the Host that wrote it', async () => {
    const url = await createDatabase(server().url, 'order');
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b', { notify: false });
    const onA = listen(a);
    const onB = listen(b);
    try {
      const { taskId } = await a.createTask({ ...SPEC, taskId: 'task-1' });
      await driveToRunning(a, taskId, 1);
      // Several events in one poll: B replays them from the Task's start for the states between.
      await b.clusterTick();
      assert.deepEqual(
        ofTask(onB.heard, taskId).map((c) => c.revision),
        [1, 2, 3, 4, 5],
      );
      assert.deepEqual(ofTask(onB.heard, taskId), ofTask(onA.heard, taskId));
      assert.ok(onB.heard.every((c) => c.host === 'host-a'));

      await b.clusterTick();
      assert.equal(ofTask(onB.heard, taskId).length, 5, 'nothing is heard twice');

      // One event (the projection's state), then two (replayed from the snapshot B kept), one of them a retained rejection.
      await a.send(taskId, { type: 'assignment.commit', harness: 'hermes', purpose: 'repair' });
      await b.clusterTick();
      await a.send(taskId, { type: 'completion.propose', generation: 1, summary: 'stale' });
      await a.send(taskId, { type: 'task.cancel', reason: 'enough' });
      await b.clusterTick();
      await b.clusterTick();
      assert.deepEqual(
        ofTask(onB.heard, taskId).map((c) => [c.revision, c.type, c.state, c.admitted, c.code]),
        ofTask(onA.heard, taskId).map((c) => [c.revision, c.type, c.state, c.admitted, c.code]),
      );
      assert.deepEqual(ofTask(onB.heard, taskId), ofTask(onA.heard, taskId));
      assert.deepEqual(
        ofTask(onB.heard, taskId)
          .slice(-3)
          .map((c) => [c.revision, c.type, c.admitted, c.code, c.state]),
        [
          [6, 'assignment.commit', true, undefined, ofTask(onA.heard, taskId)[5]!.state],
          [7, 'completion.propose', false, 'stale_assignment', ofTask(onA.heard, taskId)[5]!.state],
          [8, 'task.cancel', true, undefined, 'cancelled'],
        ],
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('with NOTIFY working, a commit on A wakes B’s watch early: B hears it with its poll ten minutes away', async () => {
    const url = await createDatabase(server().url, 'notify');
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    const onB = listen(b);
    try {
      const { taskId } = await a.createTask({ ...SPEC, taskId: 'task-2' });
      const created = await onB.until((c) => c.taskId === taskId && c.revision === 1, 'task.created of task-2');
      assert.deepEqual([created.type, created.host, created.state], ['task.created', 'host-a', 'open']);
      await a.send(taskId, { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
      const assigned = await onB.until((c) => c.taskId === taskId && c.revision === 2, 'revision 2 of task-2');
      assert.equal(assigned.type, 'assignment.commit');
      assert.deepEqual(
        ofTask(onB.heard, taskId).map((c) => c.revision),
        [1, 2],
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('with B’s LISTEN connection killed, polling still brings A’s commits', async () => {
    const url = await createDatabase(server().url, 'listen-killed');
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b', { pollMs: 50 });
    const onB = listen(b);
    try {
      const killed = await sql(
        url,
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = 'ordivon-listen:host-b'`,
      );
      assert.deepEqual(
        killed.rows.map((r: { done: boolean }) => r.done),
        [true],
        'B had one LISTEN connection',
      );
      const { taskId } = await a.createTask({ ...SPEC, taskId: 'task-3' });
      await a.send(taskId, { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
      await onB.until((c) => c.taskId === taskId && c.revision === 2, 'revision 2 of task-3');
      assert.deepEqual(
        ofTask(onB.heard, taskId).map((c) => c.revision),
        [1, 2],
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('with notify off (no NOTIFY sent, no LISTEN), polling alone brings A’s commits', async () => {
    const url = await createDatabase(server().url, 'notify-off');
    const a = await host(url, 'host-a', { notify: false });
    const b = await host(url, 'host-b', { notify: false, pollMs: 50 });
    const onB = listen(b);
    try {
      const listeners = await sql(
        url,
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'ordivon-listen:%'`,
      );
      assert.equal(listeners.rows[0].n, 0);
      const { taskId } = await a.createTask({ ...SPEC, taskId: 'task-4' });
      await onB.until((c) => c.taskId === taskId && c.revision === 1, 'task.created of task-4');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('B reads a Task A serves from the shared history, read-only and marked as served by A; getTask stays this Host’s', async () => {
    const url = await createDatabase(server().url, 'read');
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    try {
      const { taskId } = await a.createTask({ ...SPEC, taskId: 'task-5' });
      await driveToRunning(a, taskId, 1);
      const reading = await b.readTask(taskId);
      assert.ok(reading);
      assert.deepEqual([reading.elsewhere, reading.servedBy], [true, 'host-a']);
      assert.deepEqual(reading.view, a.getTask(taskId));
      assert.deepEqual(reading.events, a.events(taskId));
      const contextDigest = a.getTask(taskId)!.context.contextDigest!;
      assert.deepEqual(reading.getObject(contextDigest), a.getObject(contextDigest));
      assert.equal(b.getTask(taskId), undefined);
      assert.equal(await b.readTask('no-such-task'), undefined);

      const own = await a.readTask(taskId);
      assert.deepEqual([own?.elsewhere, own?.servedBy], [false, 'host-a']);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it(
    'B waits for a Task A serves: its state in the shared history now, then A’s commits as they come',
    { timeout: 60_000 },
    async () => {
      const url = await createDatabase(server().url, 'wait');
      const a = await host(url, 'host-a');
      const b = await host(url, 'host-b');
      try {
        const { taskId } = await a.createTask({ ...SPEC, taskId: 'task-6' });
        await driveToRunning(a, taskId, 1);
        assert.equal(await b.waitFor(taskId, ['assigned.running']), 'assigned.running');
        const cancelled = b.waitFor(taskId, ['cancelled'], []);
        assert.equal((await a.send(taskId, { type: 'task.cancel', reason: 'seen from B' })).admitted, true);
        await b.clusterTick();
        assert.equal(await cancelled, 'cancelled');
        assert.equal(b.getTask(taskId), undefined, 'B still does not serve it');
        await assert.rejects(b.waitFor(taskId, ['completed']), /reached cancelled while waiting for completed/);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    },
  );

  it('across a handover each Host’s subscribers hear every commit once: the new owner’s from itself, the old owner’s from the watch', async () => {
    const url = await createDatabase(server().url, 'handover');
    const a = await host(url, 'host-a', { notify: false });
    const b = await host(url, 'host-b', { notify: false });
    const onA = listen(a);
    const onB = listen(b);
    try {
      const { taskId } = await a.createTask({ ...SPEC, taskId: 'task-6' });
      await a.send(taskId, { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
      await b.clusterTick();
      await sql(url, `UPDATE ordivon_tasks SET lease_until = now() - interval '1 second' WHERE lease_owner = $1`, [
        'host-a',
      ]);
      await b.clusterTick();
      assert.ok(b.getTask(taskId), 'host-b serves the Task now');
      await b.send(taskId, { type: 'task.cancel', reason: 'on b' });
      await a.clusterTick();
      await b.clusterTick();
      const expected = [
        [1, 'host-a'],
        [2, 'host-a'],
        [3, 'host-b'],
      ];
      assert.deepEqual(
        ofTask(onA.heard, taskId).map((c) => [c.revision, c.host]),
        expected,
      );
      assert.deepEqual(
        ofTask(onB.heard, taskId).map((c) => [c.revision, c.host]),
        expected,
      );
      assert.equal(ofTask(onA.heard, taskId).at(-1)!.state, 'cancelled');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('reads and replays another Host’s commits only for the Tasks a subscriber asks for; one that starts asking hears them from then on, with the states A committed', async () => {
    const url = await createDatabase(server().url, 'interest');
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b', { notify: false });
    const onA = listen(a);
    const secondOnly: Committed[] = [];
    const none: Committed[] = [];
    b.subscribe((c) => secondOnly.push(c), { remote: (taskId) => taskId === 'task-2' });
    b.subscribe((c) => none.push(c), { remote: 'none' });
    try {
      await a.createTask({ ...SPEC, taskId: 'task-1' });
      await a.createTask({ ...SPEC, taskId: 'task-2' });
      await driveToRunning(a, 'task-1', 1);
      await b.clusterTick();
      assert.deepEqual(secondOnly, ofTask(onA.heard, 'task-2'), 'task-2 heard as A heard it, task-1 not at all');
      assert.deepEqual(none, [], "a subscriber asking for none hears no other Host's commit");

      // Asking from now on: task-1's next commit is heard (replayed from its start across what
      // was never read here), its earlier ones are not.
      const later = listen(b);
      await a.send('task-1', { type: 'assignment.commit', harness: 'hermes', purpose: 'repair' });
      await b.clusterTick();
      const sixth = ofTask(onA.heard, 'task-1').at(-1)!;
      assert.equal(sixth.revision, 6);
      assert.deepEqual(ofTask(later.heard, 'task-1'), [sixth]);
      assert.deepEqual(none, []);
      assert.equal(ofTask(secondOnly, 'task-1').length, 0);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
