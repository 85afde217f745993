import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { EventStore } from '../../store/index.js';
import { DECISION_HARNESSES, POLICY_2, decisionSpec, decisionWorld } from '../support/decision-task.js';
import { tempDir } from '../support/temp.js';
import { losingResponses } from '../../workloads/demo/lost-response.js';

/**
 * The decision stage's run ends while no Host admits it: the first process loses the dispatch
 * response and stops, letting the run finish; the world moves while nobody serves; a fresh
 * process reconciles the run by its request id and admits its result — re-validating the read set
 * against the world as it is now, not as the first process saw it.
 */
const CASES = [
  { name: 'policy revised', harness: 'pick-upgrade', change: 'policy', ends: 'completed', codes: ['context_stale'] },
  { name: 'goal revised', harness: 'pick-upgrade', change: 'goal', ends: 'completed', codes: ['context_stale'] },
  {
    name: 'untrusted pick',
    harness: 'pick-strip-checks',
    change: 'none',
    ends: 'waiting',
    codes: ['untrusted_authority'],
  },
  { name: 'invented pick', harness: 'pick-invented', change: 'none', ends: 'waiting', codes: ['candidate_unknown'] },
  { name: 'nothing moved', harness: 'pick-upgrade', change: 'none', ends: 'completed', codes: [] },
] as const;

type Case = (typeof CASES)[number];

/** Process 1: the run is dispatched, its response lost, the supervisor stopped; the run ends unadmitted. */
async function loseTheRun(state: string, c: Case): Promise<{ taskId: string; world: string }> {
  const first = await openHost({
    state,
    harnesses: DECISION_HARNESSES,
    wrapRuntime: (runtime) => losingResponses(runtime, ({ run }) => run.kind === 'harness'),
  });
  try {
    const dirs = decisionWorld();
    const sup = first.supervisor;
    const { taskId } = await sup.createTask(decisionSpec(dirs, { survey: false }));
    const stopped = new Promise<void>((resolve, reject) => {
      const unsubscribe = sup.subscribe((committed) => {
        if (committed.taskId !== taskId || committed.state !== 'assigned.unknown') return;
        unsubscribe();
        sup.stop().then(resolve, reject);
      });
    });
    await sup.send(taskId, { type: 'assignment.commit', harness: c.harness, stage: 'choose' });
    await stopped;
    const [job] = await first.runtime.findJobs({ clientRequestId: `${taskId}/a1/g1/run` });
    assert.equal(
      (await first.runtime.observe(job!.jobId)).state,
      'succeeded',
      'the run ends with no Host admitting it',
    );
    return { taskId, world: dirs.world };
  } finally {
    await first.stop({ jobs: 'finish' });
  }
}

/** While no Host serves: the maintainer revises a world file, or a script revises the Goal. */
async function moveTheWorld(state: string, c: Case, task: { taskId: string; world: string }): Promise<void> {
  if (c.change === 'policy') writeFileSync(join(task.world, 'POLICY.md'), POLICY_2);
  if (c.change !== 'goal') return;
  const script = createSupervisor({ state });
  await script.start();
  try {
    const revised = await script.send(task.taskId, { type: 'goal.revise', goal: 'Format 2 only.' });
    assert.equal(revised.admitted, true, JSON.stringify(revised));
  } finally {
    await script.stop();
  }
}

describe('read sets across a restart between a run and its admission', () => {
  for (const c of CASES) {
    it(`${c.name}: the fresh process re-validates what the run was bound to, and admits or refuses as if it had never stopped`, async () => {
      const state = tempDir();
      const task = await loseTheRun(state, c);
      await moveTheWorld(state, c, task);
      const second = await openHost({ state, harnesses: DECISION_HARNESSES });
      try {
        assert.equal(await second.supervisor.waitFor(task.taskId, ['completed', 'waiting']), c.ends);
      } finally {
        await second.stop();
      }
      const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
      try {
        const events = [...store.stream(task.taskId)].map((e) => e.event);
        assert.deepEqual(
          events.filter((e) => !e.disposition.admitted).map((e) => (e.disposition as { code: string }).code),
          [...c.codes],
        );
        // The result was admitted by the second process, after it reconciled the lost dispatch.
        const reconciled = events.findIndex((e) => e.type === 'dispatch.reconcile');
        assert.ok(reconciled > 0 && events.findIndex((e) => e.type === 'run.observe') > reconciled);
        const stale = events.find((e) => !e.disposition.admitted && e.type === 'run.observe');
        if (c.change !== 'none')
          assert.equal((stale?.data as { stale: Array<{ sourceId: string }> }).stale[0]!.sourceId, c.change);
      } finally {
        await store.close();
      }
    });
  }
});
