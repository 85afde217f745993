import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSupervisor, type Supervisor } from '../../kernel/supervisor.js';
import { SPEC } from '../support/tasks.js';
import { createDatabase, postgresPart, startPostgres, type PostgresServer } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';
import { http, nextCommit, startServe, type ServeChild } from './serve-child.js';

const part = postgresPart();

/** How long the test waits for a streamed commit before failing (a hang detector, not a speed limit). */
const DEADLINE_MS = 20_000;

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${DEADLINE_MS} ms: ${what}`)), DEADLINE_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('ordivon serve --store: Host B’s API shows Tasks Host A serves', { skip: part.skip, timeout: 120_000 }, () => {
  let server: PostgresServer;
  let a: Supervisor;
  let b: ServeChild;
  before(async () => {
    part.need();
    server = await startPostgres();
    const url = await createDatabase(server.url, 'service');
    // Host A in this process, Host B a real `ordivon serve`; long leases: neither takes the other's Tasks.
    a = createSupervisor({ state: tempDir(), store: url, cluster: { hostId: 'host-a', leaseMs: 600_000 } });
    await a.start();
    await a.createTask({ ...SPEC, taskId: 'on-a' });
    b = await startServe([
      '--state',
      tempDir(),
      '--port',
      '0',
      '--no-harnesses',
      '--store',
      url,
      '--host-id',
      'host-b',
      '--lease-ms',
      '600000',
      '--poll-ms',
      '200',
    ]);
  });
  after(async () => {
    if (b && b.child.exitCode === null) await b.stop();
    await a?.stop();
    await server?.stop();
  });

  it('streams A’s commits of its Task over B’s SSE endpoint, with the Host that wrote each', async () => {
    const stream = await nextCommit(b.ready, (c) => c.taskId === 'on-a' && c.revision === 2, '?taskId=on-a');
    try {
      await within(stream.opened, 'the stream opened');
      const sent = await a.send('on-a', { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
      assert.equal(sent.written, true);
      const streamed = await within(stream.commit, 'revision 2 of on-a on host-b');
      assert.deepEqual(
        [streamed.type, streamed.state, streamed.origin, streamed.admitted, streamed.host],
        ['assignment.commit', a.getTask('on-a')!.state, 'external', true, 'host-a'],
      );
    } finally {
      stream.close();
    }
  });

  it('answers GET /tasks/:id and its events from the shared history, marked as served by A; a send there is task_elsewhere', async () => {
    const task = await http(b.ready, 'GET', '/tasks/on-a?events=1');
    const view = a.getTask('on-a')!;
    assert.deepEqual(
      [task.status, task.body.revision, task.body.state, task.body.title, task.body.servedBy, task.body.elsewhere],
      [200, view.revision, view.state, SPEC.title, 'host-a', true],
    );
    assert.deepEqual(task.body.context, view.context);
    const events = await http(b.ready, 'GET', '/tasks/on-a/events');
    assert.equal(events.status, 200);
    assert.deepEqual(
      events.body.events.map((e: { revision: number; type: string }) => [e.revision, e.type]),
      a.events('on-a').map((e) => [e.revision, e.type]),
    );
    const requests = await http(b.ready, 'GET', '/tasks/on-a/requests');
    assert.deepEqual([requests.status, requests.body], [200, { taskId: 'on-a', requests: [] }]);

    const refused = await http(b.ready, 'POST', '/tasks/on-a/events', { body: { type: 'task.cancel', reason: 'b' } });
    assert.deepEqual([refused.status, refused.body.code, refused.body.written], [409, 'task_elsewhere', false]);
    assert.equal((await http(b.ready, 'GET', '/tasks/nowhere')).status, 404);
    assert.equal((await http(b.ready, 'GET', '/events?taskId=nowhere')).status, 404);
  });
});
