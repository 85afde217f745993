import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSupervisor } from '../../kernel/supervisor.js';
import { HostError } from '../../kernel/errors.js';
import { canonicalJson } from '../../store/index.js';
import { tempDir } from '../support/temp.js';
import { SPEC, driveToRunning, observeRun } from '../support/tasks.js';

function storeDigest(sup: ReturnType<typeof createSupervisor>, taskId: string): string {
  return canonicalJson({ events: sup.events(taskId), task: sup.getTask(taskId) });
}

describe('Supervisor', () => {
  it('creates a Task, admits an external Assignment and reports revision and state', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    try {
      assert.equal(sup.status, 'serving');
      const { taskId, revision } = await sup.createTask(SPEC);
      assert.equal(revision, 1);
      assert.equal(sup.getTask(taskId)?.state, 'open');
      const result = await sup.send(taskId, { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
      assert.deepEqual(result, {
        kind: 'admitted',
        admitted: true,
        written: true,
        revision: 2,
        state: 'assigned.compiling',
      });
      assert.equal(sup.getTask(taskId)?.context.generation, 1);
    } finally {
      await sup.stop();
    }
  });

  it('retains a stale completion.propose as stale_assignment and changes nothing else', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    try {
      const { taskId } = await sup.createTask(SPEC);
      await driveToRunning(sup, taskId, 1);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'hermes', purpose: 'repair' });
      const before = sup.getTask(taskId)!;
      const result = await sup.send(taskId, { type: 'completion.propose', generation: 1, summary: 'done, trust me' });
      assert.equal(result.admitted, false);
      assert.equal(result.written, true);
      assert.equal(result.code, 'stale_assignment');
      const after = sup.getTask(taskId)!;
      assert.equal(after.revision, before.revision + 1);
      assert.equal(after.state, before.state);
      assert.deepEqual(
        { ...after.context, rejected: 0, lastRejection: null },
        { ...before.context, rejected: 0, lastRejection: null },
      );
      assert.deepEqual(
        [after.context.rejected, after.context.lastRejection?.reason, after.context.lastRejection?.generation],
        [before.context.rejected + 1, 'stale_assignment', 1],
      );
      const last = sup.events(taskId).at(-1)!;
      assert.deepEqual(
        [last.type, last.origin, last.disposition],
        ['completion.propose', 'external', { admitted: false, code: 'stale_assignment' }],
      );
    } finally {
      await sup.stop();
    }
  });

  it('rejects a proposal lacking required evidence with missing_artifact and the Task waits', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    try {
      const { taskId } = await sup.createTask(SPEC);
      const run = await driveToRunning(sup, taskId, 1);
      assert.equal((await observeRun(sup, taskId, 1, run, { 'diagnosis.json': '{"location":"x"}' })).admitted, true);
      const result = await sup.send(taskId, { type: 'completion.propose', generation: 1 });
      assert.equal(result.code, 'missing_artifact');
      assert.equal(result.state, 'waiting');
      assert.match(result.detail ?? '', /completion\.json/);
      assert.equal(sup.getTask(taskId)?.context.proposal, null);
    } finally {
      await sup.stop();
    }
  });

  it('refuses an external verification.record with not_allowed and writes nothing', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    try {
      const { taskId } = await sup.createTask(SPEC);
      const before = storeDigest(sup, taskId);
      const forged = {
        type: 'verification.record',
        generation: 1,
        passed: true,
        verificationDigest: `sha256:${'0'.repeat(64)}`,
        sourceDigest: `sha256:${'1'.repeat(64)}`,
        outcomeDigest: `sha256:${'2'.repeat(64)}`,
      };
      const result = await sup.sendRaw(taskId, forged);
      assert.deepEqual([result.admitted, result.written, result.code], [false, false, 'not_allowed']);
      assert.equal(storeDigest(sup, taskId), before);
    } finally {
      await sup.stop();
    }
  });

  it('answers malformed events with invalid_event and the field path, writing nothing', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    try {
      const { taskId } = await sup.createTask(SPEC);
      const before = storeDigest(sup, taskId);
      const cases: Array<[unknown, string]> = [
        [{ type: 'assignment.commit', harness: '', purpose: 'x' }, 'harness'],
        [{ type: 'completion.propose', generation: 'one' }, 'generation'],
        [{ type: 'completion.propose', generation: 1, evidence: { 'a.json': 'not-a-digest' } }, 'evidence.a.json'],
        [{ type: 'no.such.event' }, 'type'],
        ['not an object', '(root)'],
      ];
      for (const [event, path] of cases) {
        const result = await sup.sendRaw(taskId, event);
        assert.deepEqual(
          [result.code, result.path, result.written],
          ['invalid_event', path, false],
          JSON.stringify(event),
        );
      }
      // An unknown type is named with the nearest type a caller may send, and only those are listed.
      const typo = await sup.sendRaw(taskId, { type: 'task.cancl', reason: 'x' });
      assert.match(
        typo.detail ?? '',
        /^unknown event type "task\.cancl" \(did you mean "task\.cancel"\?\); a caller may send /,
      );
      assert.match(typo.detail ?? '', /goal\.revise/);
      assert.doesNotMatch(typo.detail ?? '', /dispatch\.ack|run\.observe/);
      assert.equal(storeDigest(sup, taskId), before);
      assert.equal((await sup.send('nope', { type: 'task.cancel', reason: 'x' })).code, 'task_not_found');
    } finally {
      await sup.stop();
    }
  });

  it('acknowledges a retried event with the same eventId without writing it twice', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    try {
      const { taskId } = await sup.createTask(SPEC);
      const event = { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' } as const;
      const first = await sup.send(taskId, event, { eventId: 'client-1' });
      const retry = await sup.send(taskId, event, { eventId: 'client-1' });
      assert.deepEqual([first.written, first.revision], [true, 2]);
      assert.deepEqual([retry.written, retry.duplicate, retry.revision, retry.admitted], [false, true, 2, true]);
      assert.equal(sup.events(taskId).length, 2);
    } finally {
      await sup.stop();
    }
  });

  it('refuses an eventId reused for a different event with idempotency_conflict, writing nothing', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    try {
      const { taskId } = await sup.createTask(SPEC);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' }, { eventId: 'k-1' });
      const before = storeDigest(sup, taskId);
      const reused = await sup.send(taskId, { type: 'task.cancel', reason: 'operator' }, { eventId: 'k-1' });
      assert.deepEqual(
        [reused.admitted, reused.written, reused.code, reused.path],
        [false, false, 'idempotency_conflict', 'eventId'],
      );
      assert.equal(storeDigest(sup, taskId), before);
    } finally {
      await sup.stop();
    }
  });

  it('rebuilds every Task after a restart deep-equal to the Task before it', async () => {
    const state = tempDir();
    const first = createSupervisor({ state });
    await first.start();
    const { taskId } = await first.createTask(SPEC);
    const run = await driveToRunning(first, taskId, 1);
    await observeRun(first, taskId, 1, run, { 'diagnosis.json': '{}' });
    await first.send(taskId, { type: 'completion.propose', generation: 1 });
    const { taskId: other } = await first.createTask({ ...SPEC, taskId: 'other-task' });
    const before = [first.getTask(taskId), first.getTask(other)];
    await first.stop();

    const second = createSupervisor({ state });
    await second.start();
    try {
      assert.deepEqual([second.getTask(taskId), second.getTask(other)], before);
      assert.equal(second.actor.getSnapshot().context.tasks, 2);
    } finally {
      await second.stop();
    }
  });

  it('refuses createTask before start() not_serving, saying to call start() first, and writes nothing', async () => {
    const state = tempDir();
    const sup = createSupervisor({ state });
    await assert.rejects(
      sup.createTask(SPEC),
      (e) =>
        e instanceof HostError &&
        e.code === 'not_serving' &&
        e.message === 'supervisor is not started: call start() before createTask',
    );
    await sup.start();
    try {
      assert.deepEqual(sup.listTasks(), []);
    } finally {
      await sup.stop();
    }
  });

  it('refuses a second supervisor on the same state root with state_locked', async () => {
    const state = tempDir();
    const first = createSupervisor({ state });
    await first.start();
    try {
      const second = createSupervisor({ state });
      await assert.rejects(second.start(), (e) => e instanceof HostError && e.code === 'state_locked');
      assert.equal(second.status, 'failed');
      assert.equal(second.failure?.code, 'state_locked');
    } finally {
      await first.stop();
    }
  });

  it('refuses createTask for an invalid spec with invalid_spec and the field path', async () => {
    const sup = createSupervisor({ state: tempDir() });
    await sup.start();
    try {
      await assert.rejects(
        sup.createTask({ ...SPEC, requiredArtifacts: [{ name: '../escape.json', schema: 'x' }] }),
        (e) =>
          e instanceof HostError &&
          e.code === 'invalid_spec' &&
          e.path === 'requiredArtifacts.0.name' &&
          /requiredArtifacts\.0\.name/.test(e.message),
      );
      await assert.rejects(
        sup.createTask({ ...SPEC, acceptance: { command: 'node', frozenTests: ['t.js'] } }),
        (e) => e instanceof HostError && e.code === 'invalid_spec' && e.path === 'workspaceSeed',
        'a spec whose frozen tests cannot be pinned names workspaceSeed',
      );
      await sup.createTask({ ...SPEC, taskId: 'fixed' });
      await assert.rejects(
        sup.createTask({ ...SPEC, taskId: 'fixed' }),
        (e) => e instanceof HostError && e.code === 'task_exists',
      );
      assert.equal(sup.listTasks().length, 1);
    } finally {
      await sup.stop();
    }
  });
});
