import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openHost, type Host } from '../../host/host.js';
import type { HarnessConfig } from '../../frontier/frontier-work.js';
import type { HarnessRunReceipt } from '../../drivers/receipt.js';
import type { DispatchResult, JobRecord } from '../../runtime/index.js';
import { SPEC } from '../support/tasks.js';
import { createDatabase, postgresPart, sharedPostgres, sql } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';

const part = postgresPart();

const sh = (script: string): HarnessConfig => ({
  driver: 'command',
  command: '/bin/sh',
  args: ['-c', script],
  timeoutMs: 60_000,
});

const HARNESSES = {
  // Runs until its Host stops it: the run in flight when host-a goes silent.
  hold: sh('while true; do sleep 0.05; done'),
  diagnose: sh(`printf '{"cause":"found"}' > diagnosis.json`),
};

/** A Host whose leases and heartbeat only the test moves (a long lease, in SQL). */
function host(url: string, hostId: string, harnesses: Record<string, HarnessConfig> = HARNESSES): Promise<Host> {
  return openHost({
    state: tempDir(),
    store: url,
    cluster: { hostId, leaseMs: 600_000 },
    harnesses,
    maxThreads: 1,
  });
}

describe('a Task taken over with a run in flight (two Hosts, one PostgreSQL)', { skip: part.skip }, () => {
  const server = sharedPostgres();

  it(
    "host-b reconciles host-a's dispatch by its exact clientRequestId, records the run abandoned as one machine does after a crash, never dispatches that generation again, and retries the stage under the next",
    { timeout: 120_000 },
    async () => {
      const url = await createDatabase(server().url, 'takeover');
      const a = await host(url, 'host-a');
      // On host-b `hold` diagnoses: the stage host-b dispatches again itself (its retry) finishes.
      const b = await host(url, 'host-b', { ...HARNESSES, hold: HARNESSES.diagnose });
      let answer = () => {};
      try {
        // host-a's Runtime starts the job, and host-a goes silent before the answer reaches its Task
        // (the response is held back here, as a paused or partitioned Host would).
        let started!: (result: DispatchResult) => void;
        const dispatched = new Promise<DispatchResult>((resolve) => (started = resolve));
        const held = new Promise<void>((resolve) => (answer = resolve));
        const dispatch = a.runtime.dispatch.bind(a.runtime);
        a.runtime.dispatch = async (input) => {
          const result = await dispatch(input);
          started(result);
          await held;
          return result;
        };
        const { taskId } = await a.supervisor.createTask({ ...SPEC, taskId: 'task-1' });
        await a.supervisor.send(taskId, { type: 'assignment.commit', harness: 'hold', purpose: 'diagnose' });
        const { jobId } = await dispatched;
        const requestId = `${taskId}/a1/g1/run`;

        await sql(
          url,
          `UPDATE ordivon_tasks SET lease_until = now() - interval '1 second' WHERE lease_owner = 'host-a'`,
        );
        await sql(
          url,
          `UPDATE ordivon_hosts SET heartbeat_until = now() - interval '1 second' WHERE host_id = 'host-a'`,
        );
        // The keeper round adopts the Task and reconciles its unknown dispatch before it resolves.
        await b.supervisor.clusterTick();
        const reconciled = b.supervisor.events(taskId).find((e) => e.type === 'dispatch.reconcile')?.data;
        assert.deepEqual(reconciled, { clientRequestId: requestId, jobIds: [jobId] }, 'found host-a’s job by its id');
        assert.equal(await b.supervisor.waitFor(taskId, ['waiting']), 'waiting');

        const events = b.supervisor.events(taskId);
        assert.deepEqual(
          events.map((e) => e.type),
          [
            'task.created',
            'assignment.commit',
            'context.compile',
            'dispatch.intend',
            'dispatch.lost',
            'dispatch.reconcile',
            'run.observe',
            'assignment.commit',
            'context.compile',
            'dispatch.intend',
            'dispatch.ack',
            'run.observe',
            'completion.propose',
          ],
        );
        // What one machine's Task holds after its Host died mid-run (test/reliability/crash-during-run).
        const observed = events.find((e) => e.type === 'run.observe')!.data as {
          jobStatus: string;
          evidence: object;
          receiptDigest: string;
        };
        assert.deepEqual([observed.jobStatus, Object.keys(observed.evidence)], ['abandoned', []]);
        assert.equal(b.supervisor.getObject<HarnessRunReceipt>(observed.receiptDigest).body.stopReason, 'abandoned');
        const job = await b.runtime.getJob(jobId);
        assert.deepEqual(
          [job.state, job.stopReason, job.groupGone, job.abandonedBy?.hostId],
          ['abandoned', 'executor_gone', false, 'host-b'],
        );

        // host-a's late answer is fenced: it writes nothing, and host-a stops serving the Task.
        answer();
        await a.supervisor.clusterTick();
        assert.equal(a.supervisor.getTask(taskId), undefined);

        // host-b's own Assignment of the next generation finished the work; each request id names exactly one job.
        const task = b.supervisor.getTask(taskId)!;
        assert.deepEqual(
          events.filter((e) => e.type === 'assignment.commit').map((e) => [e.origin, e.data.generation]),
          [
            ['external', 1],
            ['host', 2],
          ],
        );
        assert.equal(task.context.generation, 2);
        assert.equal(task.context.evidence['diagnosis.json']?.generation, 2);

        const rows = await sql(
          url,
          `SELECT client_request_id, host_id, count(*)::int AS jobs FROM ordivon_jobs GROUP BY 1, 2 ORDER BY 1`,
        );
        assert.deepEqual(rows.rows, [
          { client_request_id: requestId, host_id: 'host-a', jobs: 1 },
          { client_request_id: `${taskId}/a1/g2/run`, host_id: 'host-b', jobs: 1 },
        ]);
        const written = await sql(
          url,
          `SELECT host_id, record::json->>'type' AS type FROM ordivon_events WHERE task_id = $1 ORDER BY revision`,
          [taskId],
        );
        const types = written.rows.map((r: { host_id: string; type: string }) => `${r.host_id} ${r.type}`);
        assert.equal(types.filter((t) => t.endsWith(' dispatch.intend')).length, 2, 'one intent per generation');
        assert.deepEqual(
          types.filter((t) => t.endsWith('dispatch.ack')),
          ['host-b dispatch.ack'],
          'host-a’s answer never reached the shared history',
        );
        const recorded: JobRecord = await b.runtime.getJob(jobId);
        assert.equal(recorded.state, 'abandoned', 'the registry still holds the first terminal record');
      } finally {
        answer();
        await Promise.all([a.stop(), b.stop()]);
      }
    },
  );
});
