import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RootDatabase } from 'lmdb';
import { readCheckpoints } from '../../recovery/checkpoint-store.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { recoverFromCheckpoints } from '../../recovery/checkpoint.js';
import { rebuildAll } from '../../recovery/rebuild.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { taskRejections } from '../../views/task-runs.js';
import { TASK_MACHINE_VERSION } from '../../machines/index.js';
import { EventStore } from '../../store/index.js';
import { copyOf, finalStates } from '../bench/fixtures.js';
import { tamper } from '../support/tamper.js';

const TASKS = 12;
const EVENTS = 40;

/**
 * Rewrites a root as machine version 1 left it: projections and checkpoints of version 1, whose
 * context lists every rejection (`rejections`) instead of counting them and keeping the latest.
 */
function asVersion1(env: RootDatabase): void {
  const projections = env.openDB('projections', { useRecords: false } as never);
  const events = env.openDB('events', { sharedStructuresKey: Symbol.for('structures') });
  const meta = env.openDB('meta', {});
  for (const { key, value } of projections.getRange({})) {
    const taskId = key as string;
    const p = value as { revision: number; snapshot: { context: Record<string, unknown> } };
    const rejections: unknown[] = [];
    for (const { key: k, value: e } of events.getRange({ start: [taskId, 1], end: [taskId, p.revision + 1] })) {
      const { type, data, disposition } = e as {
        type: string;
        data: { generation?: number };
        disposition: { admitted: boolean; code?: string };
      };
      if (!disposition.admitted)
        rejections.push({
          event: type,
          reason: disposition.code,
          generation: data.generation ?? 0,
          revision: (k as [string, number])[1],
        });
    }
    const { rejected: _rejected, lastRejection: _last, ...context } = p.snapshot.context;
    projections.putSync(taskId, {
      ...p,
      machineVersion: 1,
      snapshot: { ...p.snapshot, context: { ...context, rejections } },
    });
    const checkpoint = meta.get(['checkpoint', taskId]) as string | undefined;
    if (checkpoint !== undefined)
      meta.putSync(['checkpoint', taskId], JSON.stringify({ ...JSON.parse(checkpoint), machineVersion: 1 }));
  }
}

describe(`a root written by machine version 1, read by version ${TASK_MACHINE_VERSION}`, () => {
  it('verifies clean, replays its Tasks instead of restoring them, and serves the current context shape', async () => {
    const root = await copyOf(TASKS, EVENTS);
    const first = createSupervisor({ state: root });
    await first.start(); // writes checkpoints of the current version
    await first.stop();
    const expected = await (async () => {
      const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
      try {
        return finalStates(rebuildAll(store));
      } finally {
        await store.close();
      }
    })();
    await tamper(root, asVersion1);

    const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
    try {
      const full = rebuildAll(store);
      // A projection of another version is stale, not drift: the replay decides.
      assert.deepEqual(full.findings, []);
      assert.deepEqual(finalStates(full), expected);
      const checkpointed = recoverFromCheckpoints(store);
      assert.deepEqual([checkpointed.findings, checkpointed.trusted, checkpointed.fullReplayed], [[], 0, TASKS]);
      assert.deepEqual(finalStates(checkpointed), expected);
      // The journal lists what a version-1 context listed.
      for (const taskId of store.taskIds()) {
        const listed = (
          store.projection(taskId)!.snapshot as { context: { rejections: Array<{ reason: string; revision: number }> } }
        ).context.rejections;
        const journal = taskRejections(
          [...store.stream(taskId)].map(({ revision, event }) => ({ revision, ...event })),
          undefined,
        );
        assert.deepEqual(
          journal.map((r) => [r.revision, r.reason]),
          listed.map((r) => [r.revision, r.reason]),
        );
      }
    } finally {
      await store.close();
    }

    const sup = createSupervisor({ state: root, recovery: 'checkpoint' });
    await sup.start();
    const task = sup
      .listTasks()
      .map((t) => sup.getTask(t.taskId)!)
      .find((t) => t.context.rejected > 0)!;
    assert.ok(task, 'some Task has rejections');
    assert.equal(
      task.context.lastRejection?.revision,
      taskRejections(sup.events(task.taskId), task.context.lastRejection).at(-1)?.revision,
    );
    await sup.stop();
    const again = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
    try {
      const checkpoints = [...readCheckpoints(again).values()] as Array<{ machineVersion: number }>;
      assert.deepEqual(new Set(checkpoints.map((c) => c.machineVersion)), new Set([TASK_MACHINE_VERSION]));
      const report = recoverFromCheckpoints(again);
      assert.deepEqual([report.findings, report.trusted], [[], TASKS]);
    } finally {
      await again.close();
    }
  });
});
