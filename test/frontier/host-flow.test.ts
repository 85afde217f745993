import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { hermesLikeLaunch } from '../../workloads/scripted/hermes-script.js';
import { hermesLikeScript } from '../../workloads/hamilton-v1/behaviours.js';
import { loadWorkload } from '../../cli/workload.js';
import { tempDir } from '../support/temp.js';
import { waitForState } from '../support/wait.js';
import { taskRejections } from '../../views/task-runs.js';

const workload = loadWorkload('hamilton-v1');

/** Two scripted Hermes-like harnesses (distinct names, so the repair is a real replacement). */
function harnesses(repair: 'repair' | 'repair-without-completion' = 'repair') {
  const launch = (behaviour: Parameters<typeof hermesLikeScript>[1]) => ({
    driver: 'acp' as const,
    ...hermesLikeLaunch(hermesLikeScript(workload, behaviour)),
    timeoutMs: 60_000,
  });
  return {
    'hermes-a': () => launch('diagnose'),
    'hermes-b': ({ purpose }: { purpose: string }) => launch(purpose === 'diagnose' ? 'diagnose' : repair),
  };
}

describe("the Host's frontier work end to end (scripted Hermes-like agent over ACP, real Runtime jobs and driver pool)", () => {
  it('diagnoses, waits, repairs under a new generation, verifies and commits the outcome', async () => {
    const host = await openHost({ state: tempDir(), harnesses: harnesses() });
    const { supervisor: sup } = host;
    try {
      const { taskId } = await sup.createTask(workload.spec);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'hermes-a', purpose: 'diagnose' });
      await waitForState(sup, taskId, ['waiting']);
      const afterDiagnosis = sup.getTask(taskId)!;
      assert.deepEqual(Object.keys(afterDiagnosis.context.evidence), ['diagnosis.json']);

      await sup.send(taskId, { type: 'assignment.commit', harness: 'hermes-b', purpose: 'repair' });
      await waitForState(sup, taskId, ['completed']);
      const done = sup.getTask(taskId)!;
      assert.equal(done.context.generation, 2);
      assert.deepEqual(Object.keys(done.context.evidence).sort(), ['completion.json', 'diagnosis.json']);
      assert.equal(done.context.evidence['diagnosis.json']!.generation, 1);
      assert.equal(done.context.evidence['completion.json']!.generation, 2);
      assert.equal(done.context.verification?.passed, true);
      const outcome = host.runtime && sup.events(taskId).at(-1)!;
      assert.equal(outcome.type, 'verification.record');
      const types = sup.events(taskId).map((e) => e.type);
      assert.deepEqual(types, [
        'task.created',
        'assignment.commit',
        'context.compile',
        'dispatch.intend',
        'dispatch.ack',
        'run.observe',
        'evaluation.settle',
        'assignment.commit',
        'context.compile',
        'dispatch.intend',
        'dispatch.ack',
        'run.observe',
        'completion.propose',
        'verification.record',
      ]);
    } finally {
      await host.stop();
    }
  });

  it('a replacement while the previous run hangs cancels the fenced run and the new generation proceeds', async () => {
    const hang = {
      driver: 'acp' as const,
      ...hermesLikeLaunch({ steps: [{ do: 'thought', text: 'thinking…' }, { do: 'hang' }] }),
      timeoutMs: 600_000,
    };
    const host = await openHost({ state: tempDir(), harnesses: { ...harnesses(), stuck: hang } });
    const { supervisor: sup } = host;
    try {
      const { taskId } = await sup.createTask(workload.spec);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'stuck', purpose: 'diagnose' });
      await waitForState(sup, taskId, ['assigned.running']);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'hermes-a', purpose: 'diagnose' });
      await waitForState(sup, taskId, ['waiting']);
      const [stuckJob] = await host.runtime.findJobs({ clientRequestId: `${taskId}/a1/g1/run` });
      assert.equal((await host.runtime.observe(stuckJob!.jobId)).state, 'cancelled');
      assert.equal(sup.getTask(taskId)!.context.evidence['diagnosis.json']?.generation, 2);
    } finally {
      await host.stop();
    }
  });

  it('F2: a repair that exits 0 without completion.json is rejected missing_artifact, not verified, and a later Assignment completes it', async () => {
    const host = await openHost({
      state: tempDir(),
      harnesses: { ...harnesses('repair-without-completion'), 'hermes-c': harnesses('repair')['hermes-b'] },
    });
    const { supervisor: sup } = host;
    try {
      const { taskId } = await sup.createTask(workload.spec);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'hermes-a', purpose: 'diagnose' });
      await waitForState(sup, taskId, ['waiting']);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'hermes-b', purpose: 'repair' });
      await waitForState(sup, taskId, ['waiting'], ['completed', 'cancelled', 'blocked']);
      const waiting = sup.getTask(taskId)!;
      assert.deepEqual(
        taskRejections(sup.events(taskId), waiting.context.lastRejection).map((r) => [r.reason, r.generation]),
        [['missing_artifact', 2]],
      );
      assert.equal(waiting.context.rejected, 1);
      assert.equal(waiting.context.verification, null, 'verification must not run');
      assert.ok(!sup.events(taskId).some((e) => e.type === 'verification.record'));
      const jobs = await host.runtime.findJobs({ clientRequestId: `${taskId}/a1/g2/verify` });
      assert.equal(jobs.length, 0, 'no verification job dispatched');

      await sup.send(taskId, { type: 'assignment.commit', harness: 'hermes-c', purpose: 'repair' });
      await waitForState(sup, taskId, ['completed']);
      assert.equal(sup.getTask(taskId)!.context.generation, 3);
    } finally {
      await host.stop();
    }
  });
});
