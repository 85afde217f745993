import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSupervisor, type Supervisor } from '../../kernel/supervisor.js';
import { SPEC } from '../support/tasks.js';
import { createDatabase, postgresPart, sql, startPostgres, type PostgresServer } from '../support/postgres.js';
import { startProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';
import { http, startServe, type ServeChild } from '../service/serve-child.js';
import { HostProcess, type WriterLog } from './host-process.js';

const part = postgresPart();

/** How long any wait on another process or the database may take before the test fails (a hang detector). */
const WAIT_MS = 60_000;

function through(url: string, proxy: TcpProxy): string {
  const proxied = new URL(url);
  proxied.port = String(proxy.port);
  return proxied.toString();
}

describe('a cluster Host whose database connections fail', { skip: part.skip, timeout: 240_000 }, () => {
  let server: PostgresServer;
  before(async () => {
    part.need();
    server = await startPostgres();
  });
  after(() => server?.stop());

  it('keeps serving after every one of its connections is reset, closed by the proxy, or ended by the server: new events are admitted and durable, and the process never exits', async () => {
    const url = await createDatabase(server.url, 'reset');
    const target = new URL(url);
    const proxy = await startProxy(Number(target.port), target.hostname);
    const log: WriterLog = { acks: [], refusals: [], problems: [], unexpectedExits: 0 };
    const host = new HostProcess(
      {
        url: through(url, proxy),
        root: tempDir(),
        hostId: 'host-a',
        seed: 31,
        lanes: 3,
        // Long enough that no reset lets the lease run out: the Host keeps its own Tasks throughout.
        leaseMs: 30_000,
        renewEveryMs: 200,
        statementTimeoutMs: 5_000,
      },
      log,
    );
    try {
      await host.untilLine((line) => line.startsWith('booted '), WAIT_MS, 'boot');
      await host.untilMoreLines(20, WAIT_MS);
      let acksBefore = 0;
      // A reset (RST), a proxy closing every connection (FIN), and the server ending every session
      // of the database as a restart does (pg_terminate_backend), then a reset again.
      const faults: Array<[string, () => Promise<void>]> = [
        ['reset', async () => assert.ok(proxy.reset() > 0, 'the Host had connections open')],
        ['proxy close', async () => proxy.cutAll()],
        [
          'sessions ended by the server',
          async () => {
            const ended = await sql(
              server.url,
              `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'reset' AND pid <> pg_backend_pid()`,
            );
            assert.ok(ended.rows.length > 0, 'the Host had sessions');
          },
        ],
        ['reset', async () => assert.ok(proxy.reset() > 0, 'the Host had connections open')],
      ];
      for (const [what, fault] of faults) {
        await fault();
        acksBefore = log.acks.length;
        // Acknowledged after the fault: admitted through connections opened anew.
        await until(`acks after the ${what}`, WAIT_MS, async () =>
          log.acks.length >= acksBefore + 10 ? true : undefined,
        );
      }
      const answer = await host.ask('list', 'serving', WAIT_MS);
      assert.ok(answer.length > 'serving '.length, 'the Host still serves its Tasks');
      await host.stop(WAIT_MS);
      assert.deepEqual(log.problems, [], 'no error line and no exit of its own');
      const acked = log.acks.slice(acksBefore);
      const stored = await sql(
        url,
        `SELECT task_id, revision, event_id FROM ordivon_events WHERE (task_id, revision) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))`,
        [acked.map((a) => a.taskId), acked.map((a) => a.revision)],
      );
      const found = new Set(stored.rows.map((r) => `${r.task_id} ${r.revision}`));
      assert.deepEqual(
        acked.filter((a) => !found.has(`${a.taskId} ${a.revision}`)),
        [],
        'every event acknowledged after the last reset is in the shared history',
      );
    } finally {
      await host.kill();
      await proxy.close();
    }
  });

  describe('ordivon serve cut off from its database (a blackholed connection)', () => {
    let url: string;
    let proxy: TcpProxy;
    let serve: ServeChild;
    let other: Supervisor;
    before(async () => {
      url = await createDatabase(server.url, 'cutoff');
      const target = new URL(url);
      proxy = await startProxy(Number(target.port), target.hostname);
      serve = await startServe([
        '--state',
        tempDir(),
        '--port',
        '0',
        '--no-harnesses',
        '--store',
        through(url, proxy),
        '--host-id',
        'host-b',
        // Renewed (and a Task whose append's outcome was unknown copied again) every second.
        '--lease-ms',
        '3000',
        // Short, so a blackholed request fails within the test; long enough that the boot's own
        // statements finish on a machine busy with the rest of the suite.
        '--db-statement-timeout-ms',
        '1500',
        '--db-connect-timeout-ms',
        '1500',
      ]);
      other = createSupervisor({ state: tempDir(), store: url, cluster: { hostId: 'host-a', leaseMs: 600_000 } });
      await other.start();
    });
    after(async () => {
      proxy?.heal();
      await other?.stop();
      if (serve && serve.child.exitCode === null) await serve.stop();
      await proxy?.close();
    });

    it('a send to one of its Tasks from another Host answers task_elsewhere naming host-b and the URL it listens on (--advertise-url defaults to it)', async () => {
      const created = await http(serve.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'on-b' } });
      assert.equal(created.status, 201, created.text);
      const refused = await other.send('on-b', { type: 'task.cancel', reason: 'x' });
      assert.deepEqual(
        [refused.code, refused.host, refused.url, refused.written],
        ['task_elsewhere', 'host-b', serve.ready.url, false],
      );
    });

    it('answers 503 storage_failed (retryable), never 404, for a Task whose creation it acknowledged; once healed it serves it again', async () => {
      proxy.blackhole();
      // The append times out: its outcome is unknown, and the Host stops serving the Task until it copied it anew.
      const first = await http(serve.ready, 'POST', '/tasks/on-b/events', {
        body: { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose', eventId: 'cut-1' },
      });
      assert.deepEqual([first.status, first.body.code, first.body.written], [503, 'storage_failed', false]);
      // Not served now, and the database cannot say who serves it: before the fix this was 404 task_not_found.
      const second = await http(serve.ready, 'POST', '/tasks/on-b/events', {
        body: { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose', eventId: 'cut-2' },
      });
      assert.deepEqual([second.status, second.body.code, second.body.written], [503, 'storage_failed', false]);
      const read = await http(serve.ready, 'GET', '/tasks/on-b');
      assert.deepEqual([read.status, read.body.error?.code], [503, 'storage_failed'], read.text);
      const events = await http(serve.ready, 'GET', '/tasks/on-b/events');
      assert.deepEqual([events.status, events.body.error?.code], [503, 'storage_failed'], events.text);
      // A Task that never existed is still told apart only by the database: also 503 while it is away.
      const unknown = await http(serve.ready, 'POST', '/tasks/never/events', {
        body: { type: 'task.cancel', reason: 'x' },
      });
      assert.equal(unknown.status, 503, unknown.text);

      proxy.heal();
      const sent = await until('the Task served again after heal', WAIT_MS, async () => {
        const answer = await http(serve.ready, 'POST', '/tasks/on-b/events', {
          body: { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose', eventId: 'after-heal' },
        });
        // The lease may have run out meanwhile: free for a moment (task_elsewhere, no host) until this Host claims it again.
        const passing = answer.status === 503 || (answer.body.code === 'task_elsewhere' && answer.body.host === null);
        return passing ? undefined : answer;
      });
      assert.deepEqual([sent.status, sent.body.written], [200, true], sent.text);
      const gone = await http(serve.ready, 'POST', '/tasks/never/events', {
        body: { type: 'task.cancel', reason: 'x' },
      });
      assert.deepEqual([gone.status, gone.body.code], [404, 'task_not_found']);
      assert.equal(serve.child.exitCode, null, 'the service is alive');
    });
  });
});
