import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Committed } from '../../actors/task-actor.js';
import { SseHub } from '../../scripts/service/sse-hub.js';
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
  let server: Server;
  const socket = join(tempDir(), 'hub.sock');
  before(async () => {
    hub = new SseHub({ maxBufferedBytes: BOUND });
    server = createServer((req, res) => void hub.open(res, { taskId: 'slow-1' }));
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
});
