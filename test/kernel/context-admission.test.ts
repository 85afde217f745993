import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { DATA_HEADING } from '../../frontier/context-compiler.js';
import { MAX_CONSECUTIVE_RERUNS } from '../../frontier/decisions.js';
import { workspacePath } from '../../runtime/index.js';
import { EventStore, sha256 } from '../../store/index.js';
import { OBJECT_KINDS, ReadSetContext } from '../../objects/index.js';
import { DECISION_HARNESSES, POISON, POLICY_2, decisionSpec, decisionWorld } from '../support/decision-task.js';
import { tempDir } from '../support/temp.js';

/** A Task's journal and Contexts, read back from the durable state after the Host stopped. */
function readBack(state: string, taskId: string) {
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  try {
    const events = [...store.stream(taskId)].map(({ revision, event }) => ({
      revision,
      type: event.type,
      origin: event.origin,
      code: event.disposition.admitted ? undefined : event.disposition.code,
      data: event.data as Record<string, unknown>,
    }));
    const compiled = events
      .filter((e) => e.type === 'context.compile')
      .map((e) => ({
        context: ReadSetContext.parse(store.getObject(String(e.data['contextDigest']), 'context').body),
        prompt: store.getObject<{ text: string }>(String(e.data['promptDigest']), 'prompt').body.text,
        digest: String(e.data['contextDigest']),
      }));
    return { events, compiled };
  } finally {
    void store.close();
  }
}

/** Opens a Host with the decision harnesses; `survey` first when the spec has it. */
async function started(state = tempDir()) {
  const dirs = decisionWorld();
  const host = await openHost({ state, harnesses: DECISION_HARNESSES });
  const { taskId } = await host.supervisor.createTask(decisionSpec(dirs));
  await host.supervisor.send(taskId, { type: 'assignment.commit', harness: 'surveyor', stage: 'survey' });
  await host.supervisor.waitFor(taskId, ['waiting']);
  return { host, taskId, dirs, state };
}

describe('Context read sets: admission re-validates what the work was bound to', () => {
  it('a trusted world source revised mid-run: the result is retained context_stale naming it, the stage reruns at the current revision and completes', async () => {
    const { host, taskId, dirs, state } = await started();
    const sup = host.supervisor;
    try {
      // The concurrent maintainer revises the policy right after the choose stage's Context is committed.
      const stop = sup.subscribe((c) => {
        if (c.taskId === taskId && c.type === 'context.compile' && sup.getTask(taskId)!.context.generation === 2)
          writeFileSync(join(dirs.world, 'POLICY.md'), POLICY_2);
      });
      await sup.send(taskId, { type: 'assignment.commit', harness: 'pick-upgrade', stage: 'choose' });
      assert.equal(await sup.waitFor(taskId, ['completed', 'waiting']), 'completed');
      stop();
    } finally {
      await host.stop();
    }
    const { events, compiled } = readBack(state, taskId);
    const refused = events.find((e) => e.code === 'context_stale')!;
    assert.equal(refused.type, 'run.observe');
    const item = (at: number, id: string) => compiled[at]!.context.items.find((i) => i.sourceId === id)!;
    assert.deepEqual(refused.data['stale'], [
      { sourceId: 'policy', bound: item(1, 'policy').digest, current: sha256(POLICY_2) },
      { sourceId: 'tools', bound: item(1, 'tools').digest, current: item(1, 'tools').digest, via: 'policy' },
    ]);
    // The Host reran the stage itself, under the next generation, bound to the current policy.
    const rerun = events.find((e) => e.type === 'assignment.commit' && e.origin === 'host')!;
    assert.deepEqual([rerun.data['generation'], rerun.data['stage']], [3, 'choose']);
    assert.equal(compiled[2]!.context.generation, 3);
    assert.equal(item(2, 'policy').digest, sha256(POLICY_2));
    const decided = events.filter((e) => e.type === 'decision.submit');
    assert.deepEqual(
      decided.map((e) => [e.code, e.data['contextDigest']]),
      [[undefined, compiled[2]!.digest]],
      'one decision, admitted, on the rerun Context',
    );
    assert.equal(events.at(-1)!.type, 'verification.record');
    assert.ok(existsSync(join(workspacePath(join(state, 'workspaces'), taskId, 1), 'upgraded.txt')));
    // The untrusted note reached the provider only as quoted data, after the heading that says so.
    const prompt = compiled[1]!.prompt;
    assert.equal(prompt.split(POISON).length, 2);
    const at = prompt.indexOf(POISON);
    assert.ok(prompt.indexOf(DATA_HEADING) < at && prompt.lastIndexOf('<<<data ', at) > prompt.indexOf(DATA_HEADING));
    assert.ok(prompt.indexOf('<<<end data', at) > at);
    assert.ok(prompt.includes(`Context digest: ${compiled[1]!.digest}`));
  });

  it('the Goal revised mid-run: context_stale names the Goal (and what depends on it), the rerun is compiled on the revised Goal', async () => {
    const { host, taskId, state } = await started();
    const sup = host.supervisor;
    let revised: Promise<unknown> | undefined;
    try {
      const stop = sup.subscribe((c) => {
        if (
          c.taskId === taskId &&
          c.type === 'context.compile' &&
          !revised &&
          sup.getTask(taskId)!.context.generation === 2
        )
          revised = sup.send(taskId, {
            type: 'goal.revise',
            goal: 'Move to record format 2 only.',
            reason: 'format 1 retired',
          });
      });
      await sup.send(taskId, { type: 'assignment.commit', harness: 'pick-upgrade', stage: 'choose' });
      assert.equal(await sup.waitFor(taskId, ['completed', 'waiting']), 'completed');
      stop();
      const fence = await sup.send(taskId, { type: 'goal.revise', goal: 'late', goalRevision: 7 });
      assert.equal(fence.code, 'invalid_transition', 'a completed Task takes no more events');
    } finally {
      await host.stop();
    }
    const goal = (await revised) as { admitted: boolean; state: string };
    assert.deepEqual(
      [goal.admitted, goal.state],
      [true, 'assigned.ready'],
      'taken while the choose stage was ready to dispatch',
    );
    const { events, compiled } = readBack(state, taskId);
    const refused = events.find((e) => e.code === 'context_stale')!;
    assert.equal(refused.type, 'run.observe');
    const assignment = compiled[1]!.context.items.find((i) => i.sourceId === 'assignment')!;
    assert.deepEqual(refused.data['stale'], [
      { sourceId: 'goal', bound: 'revision 1', current: 'revision 2' },
      { sourceId: 'assignment', bound: assignment.digest, current: assignment.digest, via: 'goal' },
    ]);
    assert.deepEqual(compiled[2]!.context.goal.revision, 2);
    assert.ok(compiled[2]!.prompt.includes('\nMove to record format 2 only.\n'));
  });

  it('a source that moves under every run is rerun at most MAX_CONSECUTIVE_RERUNS times, then the Task waits', async () => {
    const { host, taskId, dirs, state } = await started();
    const sup = host.supervisor;
    try {
      let revision = 1;
      const stop = sup.subscribe((c) => {
        if (c.taskId === taskId && c.type === 'context.compile')
          writeFileSync(join(dirs.world, 'POLICY.md'), `# Policy, revision ${++revision}\n`);
      });
      await sup.send(taskId, { type: 'assignment.commit', harness: 'pick-upgrade', stage: 'choose' });
      assert.equal(await sup.waitFor(taskId, ['completed', 'waiting']), 'waiting');
      stop();
    } finally {
      await host.stop();
    }
    const { events } = readBack(state, taskId);
    assert.equal(events.filter((e) => e.code === 'context_stale').length, MAX_CONSECUTIVE_RERUNS + 1);
    assert.equal(
      events.filter((e) => e.type === 'assignment.commit' && e.origin === 'host').length,
      MAX_CONSECUTIVE_RERUNS,
    );
    assert.deepEqual(
      events.slice(-2).map((e) => [e.type, e.code]),
      [
        ['run.observe', 'context_stale'],
        ['evaluation.settle', undefined],
      ],
    );
  });

  it('refuses a Goal revision that is not the next one (goal_revision_mismatch), writing nothing', async () => {
    const host = await openHost({ state: tempDir(), harnesses: DECISION_HARNESSES });
    try {
      const { taskId, revision } = await host.supervisor.createTask(decisionSpec(decisionWorld()));
      const sent = await host.supervisor.send(taskId, { type: 'goal.revise', goal: 'other', goalRevision: 3 });
      assert.deepEqual(
        [sent.code, sent.path, sent.written, sent.revision],
        ['goal_revision_mismatch', 'goalRevision', false, revision],
      );
      const ok = await host.supervisor.send(taskId, { type: 'goal.revise', goal: 'other', goalRevision: 2 });
      assert.equal(ok.admitted, true);
      assert.deepEqual(host.supervisor.getTask(taskId)!.context.goal.revision, 2);
    } finally {
      await host.stop();
    }
  });
});

describe('Decision stages: the provider chooses, the Host admits and acts', () => {
  it('a candidate backed only by untrusted text is refused untrusted_authority and never performed; decisions on no Context of this Task, or one it left, are retained and refused', async () => {
    const { host, taskId, state } = await started();
    const sup = host.supervisor;
    try {
      await sup.send(taskId, { type: 'assignment.commit', harness: 'pick-strip-checks', stage: 'choose' });
      assert.equal(await sup.waitFor(taskId, ['completed', 'waiting']), 'waiting');
      const left = sup.getTask(taskId)!.context.contextDigest!;
      const foreign = await sup.send(taskId, {
        type: 'decision.submit',
        contextDigest: `sha256:${'a'.repeat(64)}`,
        candidateId: 'upgrade',
      });
      assert.deepEqual([foreign.written, foreign.admitted, foreign.code], [true, false, 'context_mismatch']);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'pick-upgrade', stage: 'choose' });
      const late = await sup.send(taskId, {
        type: 'decision.submit',
        contextDigest: left,
        candidateId: 'upgrade',
        decider: 'a script',
      });
      assert.deepEqual([late.written, late.admitted, late.code], [true, false, 'superseded']);
      assert.match(late.detail!, /was left; the current one is/);
      assert.equal(await sup.waitFor(taskId, ['completed', 'waiting']), 'completed');
    } finally {
      await host.stop();
    }
    const { events } = readBack(state, taskId);
    assert.deepEqual(
      events
        .filter((e) => e.type === 'decision.submit')
        .map((e) => [e.origin, e.data['candidateId'], e.code ?? 'admitted', e.data['authority']]),
      [
        ['host', 'strip-checks', 'untrusted_authority', 'untrusted'],
        ['external', 'upgrade', 'context_mismatch', null],
        ['external', 'upgrade', 'superseded', 'trusted'],
        ['host', 'upgrade', 'admitted', 'trusted'],
      ],
    );
    const workspace = workspacePath(join(state, 'workspaces'), taskId, 1);
    assert.equal(existsSync(join(workspace, 'stripped.txt')), false, 'the untrusted action was never performed');
    assert.equal(existsSync(join(workspace, 'upgraded.txt')), true);
    assert.deepEqual(
      events.filter((e) => e.type === 'action.record').map((e) => [e.data['candidateId'], e.data['ok']]),
      [['upgrade', true]],
    );
  });

  it('an invented candidate is candidate_unknown, a decision naming another Context leaves the Task waiting, a failing action is action_failed', async () => {
    const { host, taskId, state } = await started();
    const sup = host.supervisor;
    try {
      for (const harness of ['pick-invented', 'pick-wrong-context', 'pick-broken-tool']) {
        await sup.send(taskId, { type: 'assignment.commit', harness, stage: 'choose' });
        assert.equal(await sup.waitFor(taskId, ['completed', 'waiting']), 'waiting', harness);
      }
    } finally {
      await host.stop();
    }
    const { events } = readBack(state, taskId);
    assert.deepEqual(
      events.filter((e) => e.code !== undefined).map((e) => [e.type, e.code]),
      [
        ['decision.submit', 'candidate_unknown'],
        ['decision.submit', 'context_mismatch'],
        ['action.record', 'action_failed'],
      ],
    );
  });
});
