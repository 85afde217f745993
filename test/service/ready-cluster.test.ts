import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSupervisor } from '../../kernel/supervisor.js';
import { startService } from '../../cli/service/start-service.js';
import { createDatabase, postgresPart, sharedPostgres } from '../support/postgres.js';
import { startProxy } from '../support/tcp-proxy.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';
import { http } from './serve-child.js';

const part = postgresPart();

describe('GET /ready of a Host on a shared PostgreSQL history', { skip: part.skip, timeout: 120_000 }, () => {
  const server = sharedPostgres();

  it('answers 503 database_unreachable once a lease renewal failed, and 200 again after one succeeds (regression: /health said serving on a Host cut off from its database)', async () => {
    const url = new URL(await createDatabase(server().url, 'ready_cut_off'));
    const proxy = await startProxy(Number(url.port), url.hostname);
    url.port = String(proxy.port);
    // Quiet keeper: only this test's rounds renew, so each step happens when it says.
    const sup = createSupervisor({
      state: tempDir(),
      store: url.toString(),
      cluster: { hostId: 'host-r', leaseMs: 600_000, renewEveryMs: 600_000, statementTimeoutMs: 1_000 },
    });
    await sup.start();
    const service = await startService({ supervisor: sup, listener: { kind: 'tcp', host: '127.0.0.1', port: 0 } });
    const target = { url: service.url, token: service.token };
    try {
      await sup.createTask({ title: 't', goal: 'g', requiredArtifacts: [{ name: 'a.json' }], taskId: 'r-1' });
      assert.deepEqual((await http(target, 'GET', '/ready', { token: false })).body, { status: 'ready' });

      proxy.blackhole();
      // The keeper round's renewal times out (statementTimeoutMs): the Host is cut off.
      await sup.clusterTick();
      const cut = await http(target, 'GET', '/ready', { token: false });
      assert.equal(cut.status, 503, cut.text);
      assert.deepEqual([cut.body.status, cut.body.reason], ['not_ready', 'database_unreachable']);
      assert.ok(!Number.isNaN(Date.parse(cut.body.since)), cut.text);
      assert.equal((await http(target, 'GET', '/health', { token: false })).status, 200, 'still alive');
      const status = await http(target, 'GET', '/status');
      assert.equal(status.body.ready.reason, 'database_unreachable');
      assert.equal(typeof status.body.database.message, 'string', 'with the token, the error is named');

      proxy.heal();
      // Connections the partition broke fail first; a later round's renewal goes through.
      await until('ready again after the heal', 60_000, async () => {
        await sup.clusterTick();
        const ready = await http(target, 'GET', '/ready', { token: false });
        return ready.status === 200 ? ready : undefined;
      });
    } finally {
      proxy.heal();
      await service.close();
      await sup.stop();
      await proxy.close();
    }
  });
});
