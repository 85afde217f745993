import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readCheckpoints, type CheckpointInput } from '../../recovery/checkpoint-store.js';
import { CheckpointLedger, commitCheckpoints } from '../../recovery/boot.js';
import { HostError } from '../../kernel/errors.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { recoverFromCheckpoints } from '../../recovery/checkpoint.js';
import { createSupervisor, type Supervisor, type SupervisorOptions } from '../../kernel/supervisor.js';
import { EventStore } from '../../store/index.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

const TASK = 'task-periodic';

/** One more admitted event: a new Assignment generation (taken in `open` and in `assigned`). */
async function advance(sup: Supervisor): Promise<number> {
  const result = await sup.send(TASK, { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
  assert.equal(result.admitted, true, JSON.stringify(result));
  await sup.checkpointsWritten();
  return result.revision;
}

/** What a checkpointed start would find now, read beside the running supervisor (read-only). */
async function startNow(root: string) {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    const checkpoint = readCheckpoints(store).get(TASK) as { revision: number } | undefined;
    const report = recoverFromCheckpoints(store);
    return {
      checkpointAt: checkpoint?.revision,
      findings: report.findings,
      tailReplayed: report.tailReplayed,
      events: report.events,
    };
  } finally {
    await store.close();
  }
}

async function serving(options: SupervisorOptions): Promise<{ sup: Supervisor; root: string }> {
  const root = tempDir();
  const sup = createSupervisor({ ...options, state: root });
  await sup.start();
  await sup.createTask({ ...SPEC, taskId: TASK });
  await sup.checkpointsWritten();
  return { sup, root };
}

describe('periodic checkpoints (checkpointEvery)', () => {
  it('checkpoints a Task every N admitted events while serving, so a start after a crash replays fewer than N per Task', async () => {
    const { sup, root } = await serving({ checkpointEvery: 3 });
    try {
      assert.equal((await startNow(root)).checkpointAt, undefined, 'revision 1: not due yet');
      assert.equal(await advance(sup), 2);
      assert.equal(await advance(sup), 3);
      // Due at revision 3 (3 events since none); revisions 4 and 5 are the tail a crash now would leave.
      assert.equal(await advance(sup), 4);
      assert.equal(await advance(sup), 5);
      assert.deepEqual(await startNow(root), { checkpointAt: 3, findings: [], tailReplayed: 1, events: 2 });
      assert.equal(await advance(sup), 6);
      assert.deepEqual(await startNow(root), { checkpointAt: 6, findings: [], tailReplayed: 0, events: 0 });
      assert.deepEqual(await sup.checkpointsWritten(), {
        every: 3,
        written: 2,
        failed: 0,
        lastFailure: null,
        pending: 0,
      });
    } finally {
      await sup.stop();
    }
    // The clean stop had nothing left to write: the Task's checkpoint was already at its head.
    assert.deepEqual(sup.checkpoints(), { every: 3, written: 2, failed: 0, lastFailure: null, pending: 0 });
  });

  it('keeps a checkpoint taken at a commit valid when the Task moves on before it is written', async () => {
    const { sup, root } = await serving({ checkpointEvery: 2 });
    try {
      // Six sends queued at once: each next transition is admitted as soon as the previous one is
      // durable, so checkpoints are written while the Task is already further on.
      const sent = await Promise.all(
        Array.from({ length: 6 }, () =>
          sup.send(TASK, { type: 'assignment.commit', harness: 'codex', purpose: 'repair' }),
        ),
      );
      assert.deepEqual(
        sent.map((r) => r.revision),
        [2, 3, 4, 5, 6, 7],
      );
      await sup.checkpointsWritten();
      const now = await startNow(root);
      assert.ok(now.checkpointAt !== undefined && now.checkpointAt >= 2 && now.checkpointAt <= 7, JSON.stringify(now));
      // Whichever revision it names, the start replays exactly the events after it and finds nothing.
      assert.deepEqual(now, {
        checkpointAt: now.checkpointAt,
        findings: [],
        tailReplayed: now.checkpointAt < 7 ? 1 : 0,
        events: 7 - now.checkpointAt,
      });
    } finally {
      await sup.stop();
    }
    assert.deepEqual(await startNow(root), { checkpointAt: 7, findings: [], tailReplayed: 0, events: 0 });
  });

  it('with checkpointEvery 0 checkpoints only at a clean stop', async () => {
    const { sup, root } = await serving({ checkpointEvery: 0 });
    for (let i = 0; i < 4; i++) await advance(sup);
    const crashed = await startNow(root);
    assert.deepEqual(
      crashed,
      { checkpointAt: undefined, findings: [], tailReplayed: 0, events: 5 },
      'no checkpoint: replayed in full',
    );
    assert.equal(sup.checkpoints().written, 0);
    await sup.stop();
    assert.deepEqual(sup.checkpoints(), { every: 0, written: 1, failed: 0, lastFailure: null, pending: 0 });
    assert.deepEqual(await startNow(root), { checkpointAt: 5, findings: [], tailReplayed: 0, events: 0 });
  });

  it('counts a checkpoint write that fails instead of throwing it, and does not remember it as written', async () => {
    const { sup, root } = await serving({ checkpointEvery: 0 });
    await advance(sup);
    await sup.stop();
    const store = EventStore.open({ root, kinds: OBJECT_KINDS });
    const stored = readCheckpoints(store).get(TASK) as Omit<CheckpointInput, 'taskId'>;
    const ledger = new CheckpointLedger();
    assert.equal(ledger.revision(store, TASK), 2, 'the clean stop checkpointed revision 2');
    // A batch against the store once it is closed: LMDB refuses the write transaction.
    await store.close();
    const batch = await commitCheckpoints(store, [{ ...stored, taskId: TASK, revision: 3 }], ledger);
    assert.deepEqual([batch.written, batch.failed], [0, 1]);
    assert.match(batch.error ?? '', /closed/);
    assert.equal(ledger.revision(store, TASK), 2, 'the failed write is not taken for revision 3');
  });

  it('refuses options that do not parse with invalid_option and the field, before touching the state root', () => {
    const root = join(tempDir(), 'never-created');
    for (const [options, field] of [
      [{ checkpointEvery: -1 }, 'checkpointEvery'],
      [{ checkpointEvery: 2.5 }, 'checkpointEvery'],
      [{ streamWarnAt: 0 }, 'streamWarnAt'],
      [{ recovery: 'fast' }, 'recovery'],
    ] as const) {
      assert.throws(
        () => createSupervisor({ ...(options as SupervisorOptions), state: root }),
        (error: unknown) =>
          error instanceof HostError &&
          error.code === 'invalid_option' &&
          error.message.startsWith(`supervisor option ${field}:`),
        JSON.stringify(options),
      );
    }
    assert.equal(existsSync(root), false);
  });
});
