import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSupervisor, type Supervisor } from '../../kernel/supervisor.js';
import { NO_STATE, taskElsewhere, taskNotFound, type SendResult } from '../../kernel/send-result.js';
import { SPEC, driveToRunning } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

const commit = { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' } as const;

/** The fields a caller tells a result by: its kind, and the facts the booleans state. */
const told = (r: SendResult) => [r.kind, r.admitted, r.written, r.duplicate ?? false];

async function withSupervisor(body: (sup: Supervisor) => Promise<void>): Promise<void> {
  const sup = createSupervisor({ state: tempDir() });
  await sup.start();
  try {
    await body(sup);
  } finally {
    await sup.stop();
  }
}

describe('SendResult kind', () => {
  it('is admitted for an event the Task took', () =>
    withSupervisor(async (sup) => {
      const { taskId } = await sup.createTask(SPEC);
      const sent = await sup.send(taskId, commit);
      assert.deepEqual(told(sent), ['admitted', true, true, false]);
      assert.equal(sent.revision, 2);
    }));

  it('is retained for an event written with the rejection the statechart recorded', () =>
    withSupervisor(async (sup) => {
      const { taskId } = await sup.createTask(SPEC);
      await driveToRunning(sup, taskId, 1);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'hermes', purpose: 'repair' });
      const before = sup.getTask(taskId)!.revision;
      const sent = await sup.send(taskId, { type: 'completion.propose', generation: 1, summary: 'stale' });
      assert.deepEqual(told(sent), ['retained', false, true, false]);
      assert.equal(sent.kind === 'retained' && sent.code, 'stale_assignment');
      assert.equal(sup.getTask(taskId)!.revision, before + 1);
    }));

  it('is duplicate for a retry of a stored eventId, answered at its first revision and writing nothing', () =>
    withSupervisor(async (sup) => {
      const { taskId } = await sup.createTask(SPEC);
      const first = await sup.send(taskId, commit, { eventId: 'once' });
      const again = await sup.send(taskId, commit, { eventId: 'once' });
      assert.deepEqual(told(first), ['admitted', true, true, false]);
      assert.deepEqual(told(again), ['duplicate', true, false, true]);
      assert.deepEqual([again.revision, sup.getTask(taskId)!.revision], [first.revision, first.revision]);
    }));

  it('is refused for an event the Task does not take, writing nothing', () =>
    withSupervisor(async (sup) => {
      const { taskId } = await sup.createTask(SPEC);
      await sup.send(taskId, commit);
      const sent = await sup.send(taskId, { type: 'completion.propose', generation: 1, summary: 'early' });
      assert.deepEqual(told(sent), ['refused', false, false, false]);
      assert.deepEqual([sent.code, sent.revision, sent.state], ['invalid_transition', 2, 'assigned.compiling']);
      assert.equal(sup.getTask(taskId)!.revision, 2);
    }));

  it('is refused with the one NO_STATE at revision 0 for a Task this Host holds no state of', () =>
    withSupervisor(async (sup) => {
      const sent = await sup.send('nobody', commit);
      assert.deepEqual(
        [...told(sent), sent.code, sent.revision, sent.state],
        ['refused', false, false, false, 'task_not_found', 0, NO_STATE],
      );
      const raw = await sup.sendRaw('nobody', { type: 'no.such.event' });
      assert.deepEqual([raw.kind, raw.code, raw.state], ['refused', 'task_not_found', NO_STATE]);
    }));

  it('answers task_elsewhere and task_not_found with the same state and revision', () => {
    const elsewhere = taskElsewhere('t1', 'host-b', 'http://10.0.0.2:7070');
    const missing = taskNotFound('t1');
    assert.deepEqual(
      [elsewhere.kind, elsewhere.code, elsewhere.revision, elsewhere.state, elsewhere.host, elsewhere.url],
      ['refused', 'task_elsewhere', 0, NO_STATE, 'host-b', 'http://10.0.0.2:7070'],
    );
    assert.deepEqual([missing.kind, missing.revision, missing.state], ['refused', 0, NO_STATE]);
  });
});
