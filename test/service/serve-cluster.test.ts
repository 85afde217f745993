import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SPEC } from '../support/tasks.js';
import { createDatabase, postgresPart, sharedPostgres } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';
import { http, startServe, type ServeChild } from './serve-child.js';

const part = postgresPart();

/** Polls until `probe` gives a value (each round waits for the answers it asked for, no fixed sleep), or fails after `rounds`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, rounds = 2_000): Promise<T> {
  for (let i = 0; i < rounds; i++) {
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`gave up waiting: ${what}`);
}

describe('ordivon serve --store: three Hosts on one PostgreSQL database, one command each', { skip: part.skip }, () => {
  const server = sharedPostgres();

  it('each Host serves the Tasks it holds; when one is killed, the others take its Tasks over and admit events for them', async () => {
    const url = await createDatabase(server().url, 'three_hosts');
    const hosts: ServeChild[] = [];
    try {
      for (const name of ['host-a', 'host-b', 'host-c'])
        hosts.push(
          await startServe(
            ['--state', tempDir(), '--host-id', name, '--port', '0', '--no-harnesses', '--lease-ms', '600'],
            { ORDIVON_STORE: url },
          ),
        );
      const [a, b, c] = hosts.map((h) => h.ready) as [ServeChild['ready'], ServeChild['ready'], ServeChild['ready']];
      assert.deepEqual(
        hosts.map((h) => (h.ready as { hostId?: string }).hostId),
        ['host-a', 'host-b', 'host-c'],
      );

      const created = await http(a, 'POST', '/tasks', { body: { ...SPEC, taskId: 'served-by-a' } });
      assert.equal(created.status, 201, created.text);
      const elsewhere = await http(b, 'POST', '/tasks/served-by-a/events', {
        body: { type: 'task.cancel', reason: 'from b' },
      });
      assert.equal(elsewhere.body.code, 'task_elsewhere', elsewhere.text);
      assert.match(elsewhere.body.detail, /host-a/);

      hosts[0]!.child.kill('SIGKILL');
      await hosts[0]!.exited;
      // Its lease runs out (600 ms on the database clock); a keeper round of b or c claims the Task.
      const taker = await until('a Host serves served-by-a again', async () => {
        for (const target of [b, c]) {
          // Every Host answers for the Task (read from the database); the one serving it says it is not elsewhere.
          const task = await http(target, 'GET', '/tasks/served-by-a');
          if (task.status === 200 && task.body.elsewhere === false) return target;
        }
        return undefined;
      });
      const sent = await http(taker, 'POST', '/tasks/served-by-a/events', {
        body: { type: 'task.cancel', reason: 'after the takeover' },
      });
      assert.equal(sent.status, 200, sent.text);
      assert.equal(sent.body.written, true);
      assert.equal(sent.body.revision, 2);
      assert.equal(sent.body.state, 'cancelled');
    } finally {
      await Promise.all(
        hosts.filter((h) => h.child.exitCode === null && h.child.signalCode === null).map((h) => h.stop()),
      );
    }
  });

  it('a Host killed and started again under its id serves its Tasks at once, not once its lease (ten minutes) ran out', async () => {
    const url = await createDatabase(server().url, 'same_id');
    const state = tempDir();
    const args = ['--state', state, '--host-id', 'host-a', '--port', '0', '--no-harnesses', '--lease-ms', '600000'];
    const first = await startServe(args, { ORDIVON_STORE: url });
    let again: ServeChild | undefined;
    try {
      const created = await http(first.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'mine' } });
      assert.equal(created.status, 201, created.text);
      first.child.kill('SIGKILL');
      await first.exited;
      again = await startServe(args, { ORDIVON_STORE: url });
      const task = await http(again.ready, 'GET', '/tasks/mine');
      assert.equal(task.status, 200, task.text);
      assert.equal(task.body.elsewhere, false, 'served here, by the Host that holds it again');
      const sent = await http(again.ready, 'POST', '/tasks/mine/events', {
        body: { type: 'task.cancel', reason: 'back' },
      });
      assert.equal(sent.status, 200, sent.text);
      assert.equal(sent.body.state, 'cancelled');
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
      await again?.stop();
    }
  });
});
