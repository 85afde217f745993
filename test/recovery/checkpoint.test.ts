import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RootDatabase } from 'lmdb';
import { readCheckpoints } from '../../recovery/checkpoint-store.js';
import { HostError } from '../../kernel/errors.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { recoverFromCheckpoints, type CheckpointRecoveryReport } from '../../recovery/checkpoint.js';
import { recoverFromCheckpointsParallel } from '../../recovery/parallel.js';
import { rebuildAll, type RecoveryReport } from '../../recovery/rebuild.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { rewindCheckpoints } from '../../bench/checkpoint-rewind.js';
import { EventStore } from '../../store/index.js';
import { copyOf, finalStates, named } from '../bench/fixtures.js';
import { flipByte, tamper } from '../support/tamper.js';

const TASKS = 20;
const EVENTS = 30;

/** A generated root after one full boot and clean stop, so every Task has a checkpoint at its head. */
async function checkpointedRoot(): Promise<string> {
  const root = await copyOf(TASKS, EVENTS);
  const sup = createSupervisor({ state: root });
  await sup.start();
  await sup.stop();
  return root;
}

async function recoverBoth(
  root: string,
): Promise<{ checkpoint: CheckpointRecoveryReport; full: RecoveryReport; checkpoints: number }> {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    return {
      checkpoint: recoverFromCheckpoints(store),
      full: rebuildAll(store),
      checkpoints: readCheckpoints(store).size,
    };
  } finally {
    await store.close();
  }
}

const alterProjection = (taskId: string) => (env: RootDatabase) => {
  const db = env.openDB('projections', { useRecords: false } as never);
  const p = db.get(taskId) as { snapshot: { context: Record<string, unknown> } };
  db.putSync(taskId, { ...p, snapshot: { ...p.snapshot, context: { ...p.snapshot.context, cancelReason: 'forged' } } });
};

/** The head's event, byte for byte, stored again after it. */
function eventAfterHead(env: RootDatabase, taskId: string): void {
  const events = env.openDB('events', { encoding: 'binary' });
  const head = env.openDB('heads', {}).get(taskId) as { revision: number };
  events.putSync([taskId, head.revision + 1] as never, events.getBinary([taskId, head.revision] as never)!);
}

describe('checkpointed recovery', () => {
  it('starts every Task from a checkpoint matching its head and projection, with the states a full replay gives', async () => {
    const root = await checkpointedRoot();
    const { checkpoint, full, checkpoints } = await recoverBoth(root);
    assert.equal(checkpoints, TASKS);
    assert.deepEqual(
      [checkpoint.findings, checkpoint.trusted, checkpoint.tailReplayed, checkpoint.fullReplayed, checkpoint.events],
      [[], TASKS, 0, 0, 0],
    );
    // The journal holds exactly the heads' revisions' worth of events: no stream end was probed.
    assert.equal(checkpoint.ends, 'counted');
    assert.deepEqual(finalStates(checkpoint), finalStates(full));
    const sup = createSupervisor({ state: root, recovery: 'checkpoint' });
    await sup.start();
    assert.equal(sup.listTasks().length, TASKS);
    assert.equal(sup.getTask('task-00000004')!.spec.title, 'Fix the defect of task-00000004');
    await sup.stop();
  });

  it('refuses a projection altered after its checkpoint with projection_drift, as the full path does', async () => {
    const root = await checkpointedRoot();
    await tamper(root, alterProjection('task-00000006'));
    const { checkpoint, full } = await recoverBoth(root);
    assert.deepEqual(named(checkpoint), named(full));
    assert.equal(checkpoint.findings[0]?.code, 'projection_drift');
    assert.equal(checkpoint.fullReplayed, 1);
    for (const recovery of ['checkpoint', 'full'] as const) {
      const sup = createSupervisor({ state: root, recovery });
      await assert.rejects(sup.start(), (e) => e instanceof HostError && e.code === 'projection_drift');
    }
  });

  it('falls back to a full replay for a head that no longer matches its checkpoint, and reports what the full path reports', async () => {
    const root = await checkpointedRoot();
    await tamper(root, (env) => {
      const heads = env.openDB('heads', {});
      const head = heads.get('task-00000003') as { revision: number; digest: string };
      heads.putSync('task-00000003', { revision: head.revision, digest: `sha256:${'0'.repeat(64)}` });
      const other = heads.get('task-00000012') as { revision: number; digest: string };
      heads.putSync('task-00000012', { revision: other.revision + 1, digest: other.digest });
    });
    const { checkpoint, full } = await recoverBoth(root);
    assert.deepEqual(named(checkpoint).sort(), named(full).sort());
    assert.deepEqual(checkpoint.findings.map((f) => [f.code, f.taskId, f.object]).sort(), [
      ['stream_corrupt', 'task-00000003', 'head'],
      ['stream_gap', 'task-00000012', 'head'],
    ]);
  });

  it('replays a missing, malformed or undecodable checkpoint in full, boots, and writes a fresh one', async () => {
    const root = await checkpointedRoot();
    await tamper(root, (env) => {
      const meta = env.openDB('meta', {});
      meta.removeSync(['checkpoint', 'task-00000001'] as never);
      meta.putSync(['checkpoint', 'task-00000002'] as never, '{"revision": "not a checkpoint"');
      // Bytes no cursor can decode (a map of two entries that ends after one key): once an uncoded boot_failed.
      env
        .openDB('meta', { encoding: 'binary' })
        .putSync(['checkpoint', 'task-00000004'] as never, Buffer.from([0x82, 0xa1, 0x61]));
    });
    const sup = createSupervisor({ state: root, recovery: 'checkpoint' });
    await sup.start();
    assert.deepEqual(sup.bootReport()?.checkpoint, {
      trusted: TASKS - 3,
      tailReplayed: 0,
      fullReplayed: 3,
      codeChanged: 0,
      headMismatch: 0,
    });
    await sup.stop();
    const { checkpoint } = await recoverBoth(root);
    assert.deepEqual([checkpoint.findings, checkpoint.trusted], [[], TASKS]);
  });

  it('verifies and replays only the tail after a checkpoint, and finds damage inside that tail', async () => {
    const root = await checkpointedRoot();
    await rewindCheckpoints(root, 3);
    const { checkpoint, full } = await recoverBoth(root);
    assert.deepEqual([checkpoint.findings, checkpoint.tailReplayed, checkpoint.events], [[], TASKS, TASKS * 3]);
    assert.deepEqual(finalStates(checkpoint), finalStates(full));

    await tamper(root, (env) => flipByte(env, 'events', ['task-00000008', EVENTS - 1]));
    const damaged = await recoverBoth(root);
    // A flipped bit shows as undecodable, unchained or divergent, depending on where it lands.
    const hit = damaged.checkpoint.findings.find((f) => f.taskId === 'task-00000008');
    assert.ok(hit && ['stream_corrupt', 'replay_divergence'].includes(hit.code), named(damaged.checkpoint).join('\n'));
    assert.deepEqual(named(damaged.checkpoint), named(damaged.full));
  });

  it('does not re-read history older than a matching checkpoint: that is the full check (doctor --full)', async () => {
    const root = await checkpointedRoot();
    await tamper(root, (env) => flipByte(env, 'events', ['task-00000009', 2]));
    const { checkpoint, full } = await recoverBoth(root);
    assert.deepEqual(checkpoint.findings, []);
    assert.ok(
      full.findings.some((f) => f.taskId === 'task-00000009'),
      'the full check finds it',
    );
  });

  it('checkpoints Tasks that moved at a clean stop, so the next checkpointed start replays nothing', async () => {
    const root = await checkpointedRoot();
    const sup = createSupervisor({ state: root, recovery: 'checkpoint' });
    await sup.start();
    const open = sup.listTasks().filter((t) => !['completed', 'cancelled'].includes(t.state));
    assert.ok(open.length > 0);
    for (const t of open)
      assert.equal((await sup.send(t.taskId, { type: 'task.cancel', reason: 'bench test' })).admitted, true);
    await sup.stop();
    const { checkpoint, full } = await recoverBoth(root);
    assert.deepEqual([checkpoint.findings, checkpoint.trusted, checkpoint.tailReplayed], [[], TASKS, 0]);
    assert.deepEqual(finalStates(checkpoint), finalStates(full));
    assert.ok(checkpoint.tasks.every((t) => ['completed', 'cancelled'].includes(String(t.snapshot.value))));
  });

  it('does not trust a checkpoint at the head when an event follows the head, and reports what the full path reports', async () => {
    const root = await checkpointedRoot();
    await tamper(root, (env) => eventAfterHead(env, 'task-00000004'));
    const { checkpoint, full } = await recoverBoth(root);
    assert.deepEqual([checkpoint.ends, checkpoint.trusted, checkpoint.fullReplayed], ['probed', TASKS - 1, 1]);
    assert.ok(
      checkpoint.findings.some((f) => f.taskId === 'task-00000004'),
      named(checkpoint).join('\n'),
    );
    assert.deepEqual(named(checkpoint), named(full));
  });

  it("reads the identity index for the request ids a replayed tail names; older claims are the full check's", async () => {
    const root = await checkpointedRoot();
    const LAG = 8;
    await rewindCheckpoints(root, LAG);
    // A request id named inside a replayed tail, and one named only in history a checkpoint covers.
    const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
    const intents = store.taskIds().flatMap((taskId) => {
      const head = store.head(taskId)!.revision;
      return [...store.stream(taskId)]
        .filter(({ event }) => event.type === 'dispatch.intend')
        .map(({ revision, event }) => ({
          taskId,
          id: String(event.data['clientRequestId']),
          inTail: revision > head - LAG,
        }));
    });
    await store.close();
    const inTail = intents.find((i) => i.inTail)!;
    const old = intents.find((i) => !i.inTail && i.taskId !== inTail.taskId)!;
    assert.ok(inTail && old, 'the workload has intents inside and before the tails');
    const other = (taskId: string) => (taskId === 'task-00000000' ? 'task-00000001' : 'task-00000000');
    await tamper(root, (env) => {
      const indexes = env.openDB('indexes', {});
      indexes.putSync(['request', inTail.id, other(inTail.taskId)] as never, { revision: 2 });
      indexes.putSync(['request', old.id, other(old.taskId)] as never, { revision: 2 });
    });
    const { checkpoint, full } = await recoverBoth(root);
    const conflicts = (r: RecoveryReport) =>
      r.findings
        .filter((f) => f.code === 'identity_conflict')
        .map((f) => f.object)
        .sort();
    assert.deepEqual(conflicts(checkpoint), [`request ${inTail.id}`]);
    assert.deepEqual(conflicts(full), [`request ${inTail.id}`, `request ${old.id}`].sort());
  });

  it("checks stream ends by count: damage that leaves the count unchanged is the full check's", async () => {
    const root = await checkpointedRoot();
    await tamper(root, (env) => {
      eventAfterHead(env, 'task-00000004');
      env.openDB('events', { encoding: 'binary' }).removeSync(['task-00000011', 3] as never);
    });
    const { checkpoint, full } = await recoverBoth(root);
    assert.deepEqual([checkpoint.ends, checkpoint.trusted, checkpoint.findings], ['counted', TASKS, []]);
    assert.deepEqual(
      full.findings.map((f) => f.taskId),
      ['task-00000004', 'task-00000011'],
      named(full).join('\n'),
    );
  });

  it('names streams without a head before the first head and next to each other, as the full path does', async () => {
    const root = await checkpointedRoot();
    await tamper(root, (env) => {
      const heads = env.openDB('heads', {});
      for (const id of ['task-00000000', 'task-00000005', 'task-00000006', 'task-00000019']) heads.removeSync(id);
    });
    const { checkpoint, full } = await recoverBoth(root);
    assert.deepEqual(
      checkpoint.findings.map((f) => [f.code, f.taskId]),
      ['task-00000000', 'task-00000005', 'task-00000006', 'task-00000019'].map((id) => ['stream_gap', id]),
    );
    assert.deepEqual(named(checkpoint), named(full));
  });

  it('reads each head on its own when one cannot be decoded, and reports it as the full path does', async () => {
    const root = await checkpointedRoot();
    // A map of two entries that ends after one key: the heads cursor cannot decode this value.
    await tamper(root, (env) =>
      env.openDB('heads', { encoding: 'binary' }).putSync('task-00000007', Buffer.from([0x82, 0xa1, 0x61])),
    );
    const { checkpoint, full } = await recoverBoth(root);
    assert.equal(checkpoint.ends, 'probed');
    assert.deepEqual(checkpoint.findings.map((f) => [f.code, f.taskId, f.object]).slice(0, 1), [
      ['stream_corrupt', 'task-00000007', 'head'],
    ]);
    assert.equal(checkpoint.trusted, TASKS - 1);
    assert.deepEqual(named(checkpoint), named(full));
  });

  it('names a stream that has events but no head, as the full path does', async () => {
    const root = await checkpointedRoot();
    await tamper(root, (env) => env.openDB('heads', {}).removeSync('task-00000017'));
    const { checkpoint, full } = await recoverBoth(root);
    assert.deepEqual(named(checkpoint), named(full));
    assert.equal(checkpoint.findings[0]?.code, 'stream_gap');
  });

  it('splits long tails over worker threads and reports exactly what the calling thread reports, damage included', async () => {
    const root = await checkpointedRoot();
    await rewindCheckpoints(root, 3);
    const both = async (options: { workers?: number; inThreadBelow?: number; probeTasks?: number }) => {
      const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
      try {
        return {
          parallel: await recoverFromCheckpointsParallel(store, options),
          inThread: recoverFromCheckpoints(store),
        };
      } finally {
        await store.close();
      }
    };
    const same = (a: CheckpointRecoveryReport, b: CheckpointRecoveryReport) => {
      assert.deepEqual(named(a), named(b));
      assert.deepEqual(finalStates(a), finalStates(b));
      assert.deepEqual(
        [a.events, a.trusted, a.tailReplayed, a.fullReplayed, a.stale, a.ends],
        [b.events, b.trusted, b.tailReplayed, b.fullReplayed, b.stale, b.ends],
      );
      assert.deepEqual(
        a.tasks.map((t) => [t.taskId, t.headDigest, t.spec?.title]),
        b.tasks.map((t) => [t.taskId, t.headDigest, t.spec?.title]),
      );
    };

    // 60 tail events are below the default threshold: the calling thread does them.
    assert.equal((await both({})).parallel.workers, 0);
    const healthy = await both({ workers: 2, inThreadBelow: 0, probeTasks: 4 });
    assert.equal(healthy.parallel.workers, 2);
    assert.deepEqual(
      [healthy.parallel.findings, healthy.parallel.tailReplayed, healthy.parallel.events],
      [[], TASKS, TASKS * 3],
    );
    same(healthy.parallel, healthy.inThread);

    // One damaged tail among the Tasks the calling thread verifies first, one in a worker's range.
    await tamper(
      root,
      (env) => (
        flipByte(env, 'events', ['task-00000001', EVENTS - 1]),
        flipByte(env, 'events', ['task-00000013', EVENTS - 1])
      ),
    );
    const damaged = await both({ workers: 2, inThreadBelow: 0, probeTasks: 4 });
    assert.equal(damaged.parallel.workers, 2, 'a flipped byte leaves the count: still split');
    for (const id of ['task-00000001', 'task-00000013'])
      assert.ok(
        damaged.parallel.findings.some((f) => f.taskId === id),
        named(damaged.parallel).join('\n'),
      );
    same(damaged.parallel, damaged.inThread);

    // An event after a head: the journal's count no longer adds up, so the calling thread probes.
    await tamper(root, (env) => eventAfterHead(env, 'task-00000002'));
    const probed = await both({ workers: 2, inThreadBelow: 0, probeTasks: 4 });
    assert.deepEqual([probed.parallel.workers, probed.parallel.ends], [0, 'probed']);
    same(probed.parallel, probed.inThread);
  });
});
