import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSupervisor } from '../../../kernel/supervisor.js';
import { PgHistory, type WatchedCommits } from '../../../store/postgres/index.js';
import { SPEC } from '../../support/tasks.js';
import { createDatabase, postgresPart, sharedPostgres, sql } from '../../support/postgres.js';
import { tempDir } from '../../support/temp.js';

const part = postgresPart();

/** How long a test waits for what it expects before failing (a hang detector, not a speed limit). */
const DEADLINE_MS = 20_000;

/** A promise and the callback that settles it, failing after DEADLINE_MS. */
function signal<T>(what: string): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`not within ${DEADLINE_MS} ms: ${what}`)), DEADLINE_MS);
    resolve = (value) => {
      clearTimeout(timer);
      ok(value);
    };
  });
  return { promise, resolve };
}

describe('TaskWatch on a real PostgreSQL', { skip: part.skip }, () => {
  const server = sharedPostgres();

  it('after its LISTEN connection is killed it listens again, polls, and a NOTIFY wakes it once more', async () => {
    const url = await createDatabase(server().url, 'relisten');
    const writer = createSupervisor({ state: tempDir(), store: url, cluster: { hostId: 'writer', leaseMs: 600_000 } });
    await writer.start();
    const history = await PgHistory.open({ url, hostId: 'watcher', notify: false });
    const found: WatchedCommits[] = [];
    let listening = 0;
    const relistened = signal<void>('listening again');
    const heard = signal<void>('a commit of task-1');
    const watch = history.watch({
      pollMs: 600_000,
      reconnectMs: 10,
      onCommits: (commits) => {
        found.push(commits);
        if (commits.taskId === 'task-1') heard.resolve();
      },
      onListening: () => {
        if (++listening === 2) relistened.resolve();
      },
    });
    try {
      await watch.start();
      assert.equal(listening, 1);
      const killed = await sql(
        url,
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = 'ordivon-listen:watcher'`,
      );
      assert.equal(killed.rows.length, 1);
      await relistened.promise;
      // The poll that follows every (re)LISTEN is over: only a NOTIFY can bring what comes next.
      await watch.poll();
      await writer.createTask({ ...SPEC, taskId: 'task-1' });
      await heard.promise;
      assert.deepEqual(
        found.map((c) => [c.taskId, c.after, c.owner, c.events.map((e) => [e.revision, e.hostId, e.record.type])]),
        [['task-1', 0, 'writer', [[1, 'writer', 'task.created']]]],
      );
      assert.equal(found[0]!.projection?.revision, 1);

      await watch.poll();
      assert.equal(found.length, 1, 'a poll with nothing new reports nothing');
    } finally {
      await watch.close();
      await history.close();
      await writer.stop();
    }
  });

  it('polls after listening again: a commit whose NOTIFY came while it was not listening is reported', async () => {
    const url = await createDatabase(server().url, 'missed');
    const writer = createSupervisor({ state: tempDir(), store: url, cluster: { hostId: 'writer', leaseMs: 600_000 } });
    await writer.start();
    const history = await PgHistory.open({ url, hostId: 'watcher', notify: false });
    const relistened = signal<void>('listening again');
    const heard = signal<WatchedCommits>('a commit of task-3');
    let listening = 0;
    const watch = history.watch({
      pollMs: 600_000,
      reconnectMs: 10,
      onCommits: (commits) => heard.resolve(commits),
      onListening: () => {
        if (++listening === 2) relistened.resolve();
      },
    });
    // Statements on another database of the server: this one refuses new connections for a while.
    const admin = (text: string) => sql(server().url, text);
    try {
      await watch.start();
      // The listener cannot come back until connections are allowed again; pools keep the ones they have.
      await admin(`ALTER DATABASE missed ALLOW_CONNECTIONS false`);
      const killed = await admin(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = 'ordivon-listen:watcher'`,
      );
      assert.equal(killed.rows.length, 1);
      await writer.createTask({ ...SPEC, taskId: 'task-3' });
      await admin(`ALTER DATABASE missed ALLOW_CONNECTIONS true`);
      await relistened.promise;
      const commits = await heard.promise;
      assert.deepEqual([commits.taskId, commits.events.map((e) => e.revision)], ['task-3', [1]]);
    } finally {
      await admin(`ALTER DATABASE missed ALLOW_CONNECTIONS true`).catch(() => undefined);
      await watch.close();
      await history.close();
      await writer.stop();
    }
  });

  it('leaves out the events the watching Host wrote itself', async () => {
    const url = await createDatabase(server().url, 'own');
    const sup = createSupervisor({ state: tempDir(), store: url, cluster: { hostId: 'self', leaseMs: 600_000 } });
    await sup.start();
    const history = await PgHistory.open({ url, hostId: 'self', notify: false });
    const found: WatchedCommits[] = [];
    const watch = history.watch({ pollMs: 600_000, listen: false, onCommits: (c) => void found.push(c) });
    try {
      await watch.start();
      await sup.createTask({ ...SPEC, taskId: 'task-2' });
      await watch.poll();
      assert.deepEqual(found, []);
    } finally {
      await watch.close();
      await history.close();
      await sup.stop();
    }
  });
});
