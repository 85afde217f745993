import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OBJECT_KINDS } from '../../objects/index.js';
import { rebuildAll } from '../../recovery/rebuild.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { generateRoot } from '../../bench/generate.js';
import { planTask } from '../../bench/workload.js';
import { EventStore } from '../../store/index.js';
import { tempDir } from '../support/temp.js';
import { copyOf } from './fixtures.js';

describe('bench generator', () => {
  it('plans walks of exactly the requested length, mostly completing, with stale proposals retained', () => {
    const plans = Array.from({ length: 400 }, (_, i) => planTask(i, 100, 3));
    assert.ok(plans.every((p) => p.length === 100 && p[0] === 'created'));
    const completing = plans.filter((p) => p.at(-1) === 'verifyPass').length / plans.length;
    assert.ok(completing > 0.7 && completing < 0.9, `completing share ${completing}`);
    const stale = plans.flat().filter((k) => k === 'proposeStale').length / (400 * 100);
    assert.ok(stale > 0.01 && stale < 0.03, `stale share ${stale}`);
    assert.ok(
      plans.every((p) => p.at(-1) !== 'intend'),
      'no walk ends with an unanswered dispatch intent',
    );
    assert.deepEqual(planTask(5, 3, 1), planTask(5, 3, 1));
  });

  it('writes a root that rebuildAll finds healthy and the real supervisor boots, full and checkpointed', async () => {
    const root = await copyOf(24, 40);
    const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
    const report = rebuildAll(store);
    const rejections = report.tasks.flatMap((t) =>
      t.snapshot.context.lastRejection ? [t.snapshot.context.lastRejection.reason] : [],
    );
    await store.close();
    assert.deepEqual(report.findings, []);
    assert.equal(report.tasks.length, 24);
    assert.equal(report.events, 24 * 40);
    assert.ok(
      report.objects > report.events / 3,
      'events reference objects (specs, assignments, contexts, receipts, blobs, …)',
    );
    assert.ok(report.tasks.some((t) => t.snapshot.value === 'completed'));
    assert.ok(rejections.includes('missing_artifact'));

    for (const recovery of ['full', 'checkpoint'] as const) {
      const sup = createSupervisor({ state: root, recovery });
      await sup.start();
      assert.equal(sup.status, 'serving');
      assert.equal(sup.listTasks().length, 24);
      assert.deepEqual(
        sup.listTasks().map((t) => [t.taskId, t.revision, t.state]),
        report.tasks.map((t) => [t.taskId, t.revision, sup.getTask(t.taskId)!.state]),
      );
      await sup.stop();
    }
  });

  it('reuses a complete cached root and regenerates on request', async () => {
    const cacheDir = tempDir();
    const first = await generateRoot({ tasks: 3, events: 12, cacheDir });
    const second = await generateRoot({ tasks: 3, events: 12, cacheDir });
    assert.deepEqual([first.cached, second.cached, second.root], [false, true, first.root]);
    const fresh = await generateRoot({ tasks: 3, events: 12, cacheDir, fresh: true });
    assert.equal(fresh.cached, false);
  });
});
