import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SPEC } from '../support/tasks.js';
import { createDatabase, postgresPart, sharedPostgres } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';
import { http, startServe, type ServeChild } from './serve-child.js';

const part = postgresPart();

/** The JSON log lines a serve child has written to stderr so far. */
const logLines = (serve: ServeChild) =>
  serve
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('ordivon serve --store logs its lease changes', { skip: part.skip, timeout: 90_000 }, () => {
  const server = sharedPostgres();

  it('a Host paused past its lease logs the loss on waking; the Host that took the Task logs a takeover', async () => {
    const url = await createDatabase(server().url, 'lease_log');
    const hosts: ServeChild[] = [];
    try {
      for (const name of ['host-a', 'host-b'])
        hosts.push(
          await startServe(
            ['--state', tempDir(), '--host-id', name, '--port', '0', '--no-harnesses', '--lease-ms', '600'],
            { ORDIVON_STORE: url },
          ),
        );
      const [a, b] = hosts as [ServeChild, ServeChild];
      assert.equal((await http(a.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'leased' } })).status, 201);

      a.child.kill('SIGSTOP');
      try {
        await until('host-b serves the Task', 30_000, async () => {
          const task = await http(b.ready, 'GET', '/tasks/leased');
          return task.status === 200 && task.body.elsewhere === false ? true : undefined;
        });
      } finally {
        a.child.kill('SIGCONT');
      }
      const takeover = logLines(b).find((l) => l.msg === 'lease acquired' && l.taskId === 'leased');
      assert.deepEqual([takeover?.takeover, (takeover?.epoch as number) > 1], [true, true], JSON.stringify(takeover));
      const lost = await until('host-a logs the lease it lost', 30_000, async () =>
        logLines(a).find((l) => l.msg === 'lease lost' && l.taskId === 'leased'),
      );
      assert.equal(lost.level, 40);
      const metrics = await http(b.ready, 'GET', '/metrics');
      assert.match(metrics.text, /^ordivon_lease_takeovers_total [1-9]/m);
      assert.match(metrics.text, /^ordivon_leases_held 1$/m);
    } finally {
      await Promise.all(hosts.filter((h) => h.child.exitCode === null).map((h) => h.stop()));
    }
  });
});
