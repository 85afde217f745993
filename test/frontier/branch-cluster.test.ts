import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost, type Host } from '../../host/host.js';
import { isTaskState } from '../../machines/index.js';
import { branchAgents, fanOutSpec, type BranchAgents } from '../support/branch-agent.js';
import { createDatabase, postgresPart, startPostgres, type PostgresServer } from '../support/postgres.js';
import { sql } from '../support/store-backends.js';
import { tempDir } from '../support/temp.js';

const part = postgresPart();

/**
 * Branch and join on many Hosts (docs/branch-and-join.md, "On many Hosts"): Host A serves a
 * fan-out parent and its children; one child, still waiting in A's run line, moves to Host B the
 * way a takeover moves a Task (its lease freed in the database, B's keeper round claims it). Long
 * leases and explicit keeper rounds (`clusterTick`), so nothing else moves.
 */
async function twoHosts(
  server: PostgresServer,
  name: string,
  agents: BranchAgents,
  harnessOfB: Record<string, unknown>,
): Promise<{ a: Host; b: Host; url: string }> {
  const url = await createDatabase(server.url, name);
  const cluster = { leaseMs: 600_000, pollMs: 100 };
  const env = { LIST: JSON.stringify(['a', 'b', 'c']), GATED_ITEM: 'a' };
  // A runs one agent at a time: the gated child `a` holds the slot, `b` and `c` wait in line.
  const a = await openHost({
    state: join(agents.dir, `${name}-a`),
    harnesses: agents.harnesses(env) as never,
    concurrency: { runs: 1 },
    store: url,
    cluster: { ...cluster, hostId: 'host-a' },
    ...(process.env['DEBUG_BRANCH'] ? { onStep: (t: string, s: string) => console.error('A', t, s) } : {}),
  });
  const b = await openHost({
    state: join(agents.dir, `${name}-b`),
    harnesses: { item: harnessOfB } as never,
    store: url,
    cluster: { ...cluster, hostId: 'host-b' },
    ...(process.env['DEBUG_BRANCH'] ? { onStep: (t: string, s: string) => console.error('B', t, s) } : {}),
  });
  return { a, b, url };
}

/** Resolves once `test` holds for the Host's view of its Task (checked now and at each of its commits). */
function until(host: Host, taskId: string, test: (view: ReturnType<Host['supervisor']['getTask']>) => boolean) {
  const sup = host.supervisor;
  return new Promise<void>((resolve) => {
    let off = () => {};
    const check = () => {
      if (!test(sup.getTask(taskId))) return;
      off();
      resolve();
    };
    off = sup.subscribe((c) => c.taskId === taskId && check(), { remote: 'none' });
    check();
  });
}

describe('branch and join on many Hosts (PostgreSQL)', { skip: part.skip, timeout: 180_000 }, () => {
  it('a child taken over by another Host runs there; the parent reads its end from the shared history, merges its work and joins once', async () => {
    part.need();
    const server = await startPostgres();
    const agents = branchAgents(tempDir());
    const { a, b, url } = await twoHosts(server, 'join_all', agents, agents.harness('item'));
    try {
      const moved = await startAndMove(agents, a, b, url, 'all');
      // B dispatches the moved child at once (it has no limit) and the child completes there.
      assert.equal(await b.supervisor.waitFor(moved, ['completed']), 'completed');
      await agents.open();
      assert.equal(await a.supervisor.waitFor('fan', ['completed', 'waiting']), 'completed');

      const events = a.supervisor.events('fan');
      const joins = events.filter((e) => e.type === 'branch.join');
      assert.equal(joins.length, 1, 'the join commits once');
      assert.deepEqual([...(joins[0]!.data['winners'] as string[])].sort(), ['fan.g2.1', 'fan.g2.2', 'fan.g2.3']);
      assert.deepEqual(joins[0]!.data['merged'], ['fixed/a.txt', 'fixed/b.txt', 'fixed/c.txt']);
      const observe = events.find((e) => e.type === 'branch.observe' && e.data['child'] === moved)!;
      assert.equal(observe.data['outcomeDigest'], b.supervisor.getTask(moved)!.context.outcome!.digest);
      await assertOnce(url, moved);
    } finally {
      await a.stop();
      await b.stop();
      await server.stop();
    }
  });

  it('a parent that joined without a child running on another Host: that Host cancels the child and its run', async () => {
    part.need();
    const server = await startPostgres();
    const agents = branchAgents(tempDir());
    // On B the moved child's agent never ends: only the cancel B makes from the parent's join stops it.
    const { a, b, url } = await twoHosts(server, 'join_any', agents, agents.harness('hang'));
    try {
      const moved = await startAndMove(agents, a, b, url, 'any');
      await agents.hanging(1);
      // One child's fix is not the whole one the parent's acceptance checks: it ends waiting. The join is what counts here.
      const ended = a.supervisor.waitFor('fan', ['completed', 'waiting']);
      // The gated child may have lost already: when A's other child ran first and was verified, the
      // join cancelled the gated one, and no run will come to the gate.
      const gate = new AbortController();
      void ended.then(
        () => gate.abort(),
        () => gate.abort(),
      );
      await agents.open(gate.signal);
      assert.equal(await ended, 'waiting');
      const joins = a.supervisor.events('fan').filter((e) => e.type === 'branch.join');
      // Whichever of A's children was verified first; never the one B runs, which never ends.
      assert.equal(joins.length, 1, 'the join commits once');
      const winners = joins[0]!.data['winners'] as string[];
      assert.equal(winners.length, 1);
      assert.notEqual(winners[0], moved);
      assert.equal(await b.supervisor.waitFor(moved, ['cancelled']), 'cancelled');
      const cancel = b.supervisor.events(moved).find((e) => e.type === 'task.cancel')!;
      assert.equal(cancel.data['reason'], 'parent fan joined without it');
      assert.equal(cancel.origin, 'host');
      const dispatch = b.supervisor.getTask(moved)!.context.dispatch!;
      const jobs = await b.runtime.findJobs({ clientRequestId: dispatch.clientRequestId });
      assert.equal(jobs.length, 1);
      // The cancel commits before the job's process tree is stopped and its end recorded: wait for that end.
      assert.equal((await b.runtime.observe(jobs[0]!.jobId)).state, 'cancelled');
      await assertOnce(url, moved);
    } finally {
      await a.stop();
      await b.stop();
      await server.stop();
    }
  });
});

/** Creates the fan-out parent on A and runs it to its branch; moves a child waiting in A's run line to B. */
async function startAndMove(agents: BranchAgents, a: Host, b: Host, url: string, join: 'all' | 'any'): Promise<string> {
  const sup = a.supervisor;
  await sup.createTask(fanOutSpec(agents, 'fan', join));
  await sup.send('fan', { type: 'assignment.commit', harness: 'list', stage: 'list' });
  assert.equal(await sup.waitFor('fan', ['waiting']), 'waiting');
  await sup.send('fan', { type: 'assignment.commit', harness: 'item', stage: 'fix' });
  // The gated child `a` (fan.g2.1) holds A's one run slot; a child ready by then waits in line behind it
  // (which of the other two got the slot first, if one did, is the scheduler's order).
  await until(a, 'fan.g2.1', (view) => view?.state === 'assigned.running');
  const others = ['fan.g2.3', 'fan.g2.2'];
  const settled = (view: ReturnType<Host['supervisor']['getTask']>) =>
    view !== undefined && !isTaskState(view.state, 'open', 'assigned.compiling');
  await Promise.all(others.map((id) => until(a, id, settled)));
  const moved = others.find((id) => sup.getTask(id)!.state === 'assigned.ready');
  assert.ok(moved, "a child waits in A's run line");
  await sql(url, `UPDATE ordivon_tasks SET lease_owner = NULL, lease_until = now() WHERE task_id = $1`, [moved]);
  await b.supervisor.clusterTick();
  await a.supervisor.clusterTick();
  assert.equal(a.supervisor.getTask(moved), undefined, 'A no longer serves the moved child');
  assert.notEqual(b.supervisor.getTask(moved), undefined, 'B serves it');
  return moved;
}

/** Every run of the moved child was dispatched once, and by B: one dispatch intent per request id, one job each. */
async function assertOnce(url: string, moved: string): Promise<void> {
  const { rows } = await sql(
    url,
    `SELECT task_id, host_id, count(*)::int AS n FROM ordivon_events
      WHERE record::jsonb->>'type' = 'dispatch.intend' AND (record::jsonb->'disposition'->>'admitted')::boolean
      GROUP BY task_id, host_id, record::jsonb->'data'->>'clientRequestId' ORDER BY task_id`,
  );
  for (const row of rows) assert.equal(row.n, 1, `${row.task_id}: one dispatch intent per request id`);
  assert.deepEqual(
    rows.filter((r) => r.task_id === moved).map((r) => r.host_id),
    ['host-b'],
  );
  const jobs = await sql(url, `SELECT client_request_id, count(*)::int AS n FROM ordivon_jobs GROUP BY 1`);
  for (const row of jobs.rows) assert.equal(row.n, 1, `${row.client_request_id}: one job`);
}
