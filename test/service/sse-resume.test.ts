import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSupervisor, type Supervisor } from '../../kernel/supervisor.js';
import { startService, type RunningService } from '../../cli/service/start-service.js';
import { createDatabase, postgresPart, startPostgres, type PostgresServer } from '../support/postgres.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';
import { http } from './serve-child.js';
import { sse } from './sse-client.js';

const part = postgresPart();
const revise = (n: number) => ({ type: 'goal.revise', goal: `${SPEC.goal} (revision ${n})`, reason: `r${n}` });

/** The backends the stream is resumed on: the embedded LMDB store, and a PostgreSQL history. */
const BACKENDS = [
  { name: 'lmdb', skip: false as string | false },
  { name: 'postgres', skip: part.skip },
] as const;

for (const backend of BACKENDS) {
  describe(`SSE resume with Last-Event-ID on ${backend.name}`, { skip: backend.skip, timeout: 120_000 }, () => {
    let server: PostgresServer | undefined;
    let sup: Supervisor;
    let service: RunningService;
    let target: { url: string; socket: string };
    const send = async (taskId: string, body: object) => {
      const r = await http(target, 'POST', `/tasks/${taskId}/events`, { body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.written, true, JSON.stringify(r.body));
      return r.body.revision as number;
    };
    before(async () => {
      let store: { store: string; cluster: { hostId: string; leaseMs: number } } | object = {};
      if (backend.name === 'postgres') {
        part.need();
        server = await startPostgres();
        store = {
          store: await createDatabase(server.url, 'sse'),
          cluster: { hostId: 'host-sse', leaseMs: 600_000 },
        };
      }
      const dir = tempDir();
      sup = createSupervisor({ state: join(dir, 'state'), ...store });
      await sup.start();
      service = await startService({ supervisor: sup, listener: { kind: 'socket', path: join(dir, 'api.sock') } });
      target = { url: service.url, socket: join(dir, 'api.sock') };
    });
    after(async () => {
      await service?.close();
      await sup?.stop();
      await server?.stop();
    });

    it('a client that reconnects with the last id it read receives exactly the commits it missed, then live ones', async () => {
      assert.equal((await http(target, 'POST', '/tasks', { body: { ...SPEC, taskId: 'resume-1' } })).status, 201);
      // A witness stream that stays open hears every commit live: the replay must match it exactly.
      const witness = sse(target, '/events?taskId=resume-1');
      await witness.response;
      const first = sse(target, '/events?taskId=resume-1');
      assert.equal((await first.response).statusCode, 200);
      await send('resume-1', { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
      await send('resume-1', revise(2));
      await send('resume-1', revise(3));
      const read = await first.commitsReach(3);
      first.close();
      assert.deepEqual(
        read.map((f) => [f.id, f.data.revision]),
        [
          ['2', 2],
          ['3', 3],
          ['4', 4],
        ],
      );

      // Missed while disconnected: an admitted one, a new Assignment, a retained rejection.
      await send('resume-1', revise(4));
      await send('resume-1', { type: 'assignment.commit', harness: 'hermes', purpose: 'repair' });
      await send('resume-1', { type: 'completion.propose', generation: 1, proposer: 'codex' });
      const again = sse(target, '/events?taskId=resume-1', { 'last-event-id': read.at(-1)!.id! });
      assert.equal((await again.response).statusCode, 200);
      await again.commitsReach(3);
      const cancelled = await send('resume-1', { type: 'task.cancel', reason: 'resume test' });
      const resumed = await again.commitsReach(4);
      const heard = await witness.commitsReach(7);
      again.close();
      witness.close();

      assert.deepEqual(
        resumed.map((f) => f.id),
        ['5', '6', '7', String(cancelled)],
      );
      // Replayed from the store (5-7) and live (8): the same records the live stream carried.
      assert.deepEqual(
        resumed.map((f) => f.data),
        heard.slice(3).map((f) => f.data),
      );
      assert.deepEqual([resumed[2]!.data.admitted, resumed[2]!.data.code], [false, 'stale_assignment']);
      assert.equal(resumed.at(-1)!.data.state, 'cancelled');
      if (backend.name === 'postgres') assert.ok(resumed.every((f) => f.data.host === 'host-sse'));
      else assert.ok(resumed.every((f) => f.data.host === undefined));
    });

    it('?after=0 replays the whole history; commits racing the reconnect are sent once each, in order', async () => {
      assert.equal((await http(target, 'POST', '/tasks', { body: { ...SPEC, taskId: 'resume-2' } })).status, 201);
      await send('resume-2', revise(2));
      await send('resume-2', revise(3));
      // Sends in flight while the stream subscribes and reads the store: the seam.
      const racing = [4, 5, 6, 7].map((n) => send('resume-2', revise(n)));
      const stream = sse(target, '/events?taskId=resume-2&after=0');
      await Promise.all(racing);
      await stream.response;
      const last = await send('resume-2', revise(8));
      const frames = await stream.commitsReach(last);
      stream.close();
      const events = await http(target, 'GET', '/tasks/resume-2/events');
      assert.deepEqual(
        frames.map((f) => [Number(f.id), f.data.revision, f.data.type]),
        events.body.events.map((e: any) => [e.revision, e.revision, e.type]),
      );
      assert.equal(frames[0]!.data.type, 'task.created');
    });

    it('a Last-Event-ID header wins over ?after=, and one that is no revision is refused 400', async () => {
      const stream = sse(target, '/events?taskId=resume-2&after=0', { 'last-event-id': '8' });
      await stream.response;
      const next = await send('resume-2', revise(9));
      const frames = await stream.commitsReach(1);
      stream.close();
      assert.deepEqual(
        frames.map((f) => f.id),
        [String(next)],
      );
      const bad = await http(target, 'GET', '/events?taskId=resume-2', { headers: { 'last-event-id': 'x7' } });
      assert.deepEqual(
        [bad.status, bad.body.error.code, bad.body.error.path],
        [400, 'invalid_request', 'Last-Event-ID'],
      );
      const notTask = await http(target, 'GET', '/events?after=3');
      assert.deepEqual([notTask.status, notTask.body.error.path], [400, 'after']);
    });

    it('the all-Tasks stream names each commit <taskId>:<revision> and answers a reconnect with a reset event', async () => {
      const all = sse(target, '/events');
      await all.response;
      const revision = await send('resume-2', revise(10));
      const [frame] = await all.commitsReach(1);
      all.close();
      assert.equal(frame!.id, `resume-2:${revision}`);
      const back = sse(target, '/events', { 'last-event-id': frame!.id! });
      await back.response;
      const reset = await until('the reset event', 20_000, async () => back.frames.find((f) => f.event === 'reset'));
      back.close();
      assert.deepEqual(reset.data, { reason: 'not_resumable', lastEventId: frame!.id });
    });
  });
}
