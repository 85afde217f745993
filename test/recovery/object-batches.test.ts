import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OBJECT_KINDS } from '../../objects/index.js';
import { rebuildAll } from '../../recovery/rebuild.js';
import { EventStore } from '../../store/index.js';
import { copyOf, generated, named } from '../bench/fixtures.js';
import { flipByte, tamper } from '../support/tamper.js';

const TASKS = 12;
const EVENTS = 40;

async function rebuild(root: string, objectBatch?: number) {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    return rebuildAll(store, objectBatch === undefined ? {} : { objectBatch });
  } finally {
    await store.close();
  }
}

describe('objects checked in batches, in digest order', () => {
  it('gives the findings, in the order, of checking each reference when its event is reached', async () => {
    const healthy = await rebuild(await generated(TASKS, EVENTS));
    const context = (id: string) => healthy.tasks.find((t) => t.taskId === id)!.snapshot.context;
    const evidenceOf = (id: string) => Object.values(context(id).evidence)[0]!.digest;
    const root = await copyOf(TASKS, EVENTS);
    await tamper(root, (env) => {
      // task 3: a missing Assignment object, then a drifted projection (the object finding comes first)
      env.openDB('objects', { encoding: 'binary' }).removeSync(context('task-00000003').assignment!.digest);
      const projections = env.openDB('projections', { useRecords: false } as never);
      const p = projections.get('task-00000003') as { snapshot: { context: Record<string, unknown> } };
      projections.putSync('task-00000003', {
        ...p,
        snapshot: { ...p.snapshot, context: { ...p.snapshot.context, cancelReason: 'forged' } },
      });
      // task 5: a missing artifact blob; task 7: a damaged receipt; task 8: a deleted event (its stream stops there)
      env.openDB('blobs', { encoding: 'binary' }).removeSync(evidenceOf('task-00000005'));
      flipByte(env, 'objects', context('task-00000007').lastReceipt!);
      env.openDB('events', {}).removeSync(['task-00000008', 9] as never);
    });
    // a batch per reference checks each as its event is reached: the order before batching
    const eachAtOnce = named(await rebuild(root, 1));
    assert.deepEqual(
      eachAtOnce.map((f) => f.split(' ').slice(0, 2).join(' ')),
      [
        'object_missing task-00000003',
        'projection_drift task-00000003',
        'object_missing task-00000005',
        'object_corrupt task-00000007',
        'stream_gap task-00000008',
      ],
    );
    for (const batch of [2, 7, undefined])
      assert.deepEqual(named(await rebuild(root, batch)), eachAtOnce, `objectBatch ${batch ?? 'default'}`);
  });
});
