import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Committed } from '../../kernel/task-actor.js';
import { SseHub } from '../../cli/service/sse-hub.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';
import { sse } from './sse-client.js';

const BOUND = 8 * 1024;

/** A commit record of about 2 kB (its code carries the padding), as the supervisor would publish it. */
const commit = (revision: number): Committed => ({
  taskId: 'slow-1',
  revision,
  type: 'goal.revise',
  origin: 'external',
  state: 'open',
  frontier: 'none',
  admitted: false,
  code: 'x'.repeat(2_000),
});

describe('SSE: a client that stops reading', { timeout: 60_000 }, () => {
  let hub: SseHub;
  /** What a resuming stream reads as its replay (set by each test). */
  let replay: (after: number) => Promise<Committed[]> = async () => [];
  let server: Server;
  const socket = join(tempDir(), 'hub.sock');
  before(async () => {
    hub = new SseHub({ maxBufferedBytes: BOUND });
    server = createServer((req, res) => {
      const after = new URL(req.url ?? '/', 'http://hub').searchParams.get('after');
      void hub.open(res, after === null ? { taskId: 'slow-1' } : { taskId: 'slow-1', after: Number(after), replay });
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
  });
  after(async () => {
    hub.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('is dropped past the bound with a last `dropped` event naming the last id it was sent', async () => {
    const client = sse({ url: 'http://localhost', socket }, '/events');
    await client.response;
    await until('the stream is open', 20_000, async () => (hub.size === 1 ? true : undefined));
    client.pause();
    // The socket's buffers fill first; then the process's queue passes the bound and the hub drops it.
    let revision = 0;
    while (hub.size > 0 && revision < 100_000) hub.publish(commit(++revision));
    assert.equal(hub.size, 0, 'dropped');
    client.resume();
    await until('the stream ends', 20_000, async () => (client.ended() ? true : undefined));
    const last = client.frames.at(-1)!;
    const commits = client.commits();
    assert.equal(last.event, 'dropped');
    assert.deepEqual(last.data, {
      reason: 'slow_consumer',
      lastEventId: commits.at(-1)!.id,
      maxBufferedBytes: BOUND,
    });
    // Everything before the drop arrived, in order; the commit that found the queue full was not sent.
    assert.deepEqual(
      commits.map((f) => Number(f.id)),
      Array.from({ length: commits.length }, (_, i) => i + 1),
    );
    assert.equal(commits.length, revision - 1);
  });

  it('a client that keeps reading is not dropped', async () => {
    const client = sse({ url: 'http://localhost', socket }, '/events');
    await client.response;
    await until('the stream is open', 20_000, async () => (hub.size === 1 ? true : undefined));
    for (let revision = 1; revision <= 3; revision++) hub.publish(commit(revision));
    await client.commitsReach(3);
    assert.equal(hub.size, 1);
    assert.ok(!client.frames.some((f) => f.event === 'dropped'));
    client.close();
  });

  it('a replay is written at the pace the client reads it, not dropped, then the stream goes live', async () => {
    // 200 commits of about 2 kB: far past the bound if they were queued at once.
    replay = async (after) => Array.from({ length: 200 }, (_, i) => commit(after + 1 + i));
    const client = sse({ url: 'http://localhost', socket }, '/events?after=10');
    client.pause();
    await client.response;
    await until('the stream is open', 20_000, async () => (hub.size === 1 ? true : undefined));
    client.resume();
    await client.commitsReach(200);
    hub.publish(commit(211));
    hub.publish(commit(150));
    const frames = await client.commitsReach(201);
    client.close();
    assert.deepEqual(
      frames.map((f) => Number(f.id)),
      Array.from({ length: 201 }, (_, i) => 11 + i),
    );
  });

  it('live commits held while the replay is read count against the bound: past it the stream is dropped at its position', async () => {
    let release: ((missed: Committed[]) => void) | undefined;
    replay = () => new Promise((resolve) => (release = resolve));
    const client = sse({ url: 'http://localhost', socket }, '/events?after=5');
    await until('the replay is being read', 20_000, async () => (hub.size === 1 && release ? true : undefined));
    let revision = 5;
    while (hub.size > 0 && revision < 10_000) hub.publish(commit(++revision));
    assert.equal(hub.size, 0, 'dropped');
    release!([commit(6)]);
    await until('the stream ends', 20_000, async () => (client.ended() ? true : undefined));
    assert.deepEqual(
      client.frames.map((f) => [f.event, f.data?.lastEventId]),
      [['dropped', '5']],
    );
  });
});
