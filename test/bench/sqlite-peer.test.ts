import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { initialTransition } from 'xstate';
import { manualClock } from '../../kernel/clock.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { rebuildAll } from '../../recovery/rebuild.js';
import { TaskActor } from '../../kernel/task-actor.js';
import { rebuildPeer, rebuildPeerParallel } from '../../bench/peers/sqlite-peer-recovery.js';
import { SqlitePeerStore, asKernelStore } from '../../bench/peers/sqlite-peer-store.js';
import { materialize } from '../../bench/workload.js';
import { seededRandom } from '../../bench/util.js';
import { taskMachine } from '../../machines/index.js';
import { EventStore } from '../../store/index.js';
import { tempDir } from '../support/temp.js';
import { finalStates, generated, named } from './fixtures.js';

describe('SQLite peer', () => {
  it('recovers the same final states as LMDB for the same workload, on one thread and on workers', async () => {
    const lmdbRoot = await generated(16, 30);
    const peerPath = join(await generated(16, 30, 'sqlite'), 'peer.sqlite');
    const store = EventStore.open({ root: lmdbRoot, kinds: OBJECT_KINDS, readOnly: true });
    const lmdb = rebuildAll(store);
    await store.close();
    const peer = rebuildPeer(peerPath);
    const parallel = await rebuildPeerParallel(peerPath, 2, 0);
    assert.deepEqual([lmdb.findings, peer.findings, parallel.findings], [[], [], []]);
    assert.equal(peer.events, 16 * 30);
    assert.equal(peer.objects, lmdb.objects);
    assert.deepEqual(finalStates(peer), finalStates(lmdb));
    assert.deepEqual(finalStates(parallel), finalStates(lmdb));
  });

  it('finds an altered event (its successor no longer chains) and a drifted projection, with the codes the LMDB path uses', async () => {
    const path = join(tempDir(), 'peer.sqlite');
    cpSync(join(await generated(16, 30, 'sqlite'), 'peer.sqlite'), path);
    const db = SqlitePeerStore.open(path);
    const body = db.db
      .prepare("SELECT body FROM events WHERE task_id = 'task-00000003' AND revision = 4")
      .pluck()
      .get() as string;
    db.db
      .prepare("UPDATE events SET body = ? WHERE task_id = 'task-00000003' AND revision = 4")
      .run(body.replace(/"mono":(\d+)/, '"mono":1'));
    const projection = JSON.parse(
      db.db.prepare("SELECT body FROM projections WHERE task_id = 'task-00000007'").pluck().get() as string,
    );
    projection.snapshot.context.generation = 42;
    db.db.prepare("UPDATE projections SET body = ? WHERE task_id = 'task-00000007'").run(JSON.stringify(projection));
    db.close();
    const report = rebuildPeer(path);
    assert.ok(
      named(report).some((f) => f.startsWith('stream_corrupt task-00000003 5 event 5')),
      named(report).join('\n'),
    );
    assert.ok(
      named(report).some((f) => f.startsWith('projection_drift task-00000007')),
      named(report).join('\n'),
    );
    assert.equal(report.tasks.length, 14);
  });

  it('refuses a stale expected revision (revision CAS) and acknowledges a retried event id without writing', async () => {
    const peer = SqlitePeerStore.open(join(tempDir(), 'peer.sqlite'));
    try {
      const [initial] = initialTransition(taskMachine);
      const actor = new TaskActor({
        taskId: 'task-cas',
        snapshot: initial,
        revision: 0,
        store: asKernelStore(peer),
        clock: manualClock(),
        onCommit: () => {},
      });
      const created = materialize('created', 'task-cas', actor.context, seededRandom(1));
      assert.equal((await actor.send(created.event, 'host', created.attachments)).revision, 1);
      const event = {
        id: 'e-2',
        type: 'task.cancel',
        origin: 'external' as const,
        at: 'now',
        mono: 1,
        data: { reason: 'x' },
        refs: [],
        disposition: { admitted: true as const },
      };
      const projection = { revision: 2, machineVersion: 1, state: 'cancelled', snapshot: {} };
      await assert.rejects(
        peer.append({ taskId: 'task-cas', expectedRevision: 0, event, projection }),
        (e: Error & { code?: string }) => e.code === 'revision_conflict',
      );
      const first = await peer.append({ taskId: 'task-cas', expectedRevision: 1, event, projection });
      const retry = await peer.append({ taskId: 'task-cas', expectedRevision: 1, event, projection });
      assert.deepEqual([first.duplicate, retry.duplicate, retry.digest], [false, true, first.digest]);
      actor.stop();
    } finally {
      peer.close();
    }
  });
});
