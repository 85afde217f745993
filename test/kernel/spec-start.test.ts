import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { HostError, parseTaskSpec } from '../../kernel/index.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { ACCEPT_X2, branchAgents, type BranchAgents } from '../support/branch-agent.js';
import { tempDir } from '../support/temp.js';
import { journalHas } from '../support/wait.js';
import { writeFileSync } from 'node:fs';
import { ordivon } from '../cli/run-fixture.js';

/** A one-stage Task that the Host assigns itself: `fix` on `harness`. */
function startingSpec(agents: BranchAgents, taskId: string, harness: string) {
  return {
    taskId,
    title: 'Make x equal 2',
    goal: 'The module a.js exports x; make it 2 and report.',
    requiredArtifacts: [{ name: 'report.md', kind: 'text' as const, pattern: '^# ' }],
    stages: [{ name: 'fix', produces: ['report.md'], proposesCompletion: true }],
    result: 'report.md',
    workspaceSeed: agents.seed,
    acceptance: ACCEPT_X2,
    start: { stage: 'fix', harness },
  };
}

function assignments(events: Array<{ type: string; origin: string; disposition: { admitted: boolean } }>) {
  return events.filter((e) => e.type === 'assignment.commit').map((e) => [e.origin, e.disposition.admitted]);
}

describe('a spec that names its first Assignment (start)', () => {
  it('is refused invalid_spec at start.stage when the stage is not one of the spec’s, and at start when a field is missing', () => {
    const agents = branchAgents(tempDir());
    const refused = (spec: unknown) => {
      try {
        parseTaskSpec(spec);
      } catch (error) {
        assert.ok(error instanceof HostError);
        return [error.code, error.path];
      }
      return undefined;
    };
    assert.deepEqual(refused({ ...startingSpec(agents, 't', 'right'), start: { stage: 'fx', harness: 'right' } }), [
      'invalid_spec',
      'start.stage',
    ]);
    assert.deepEqual(refused({ ...startingSpec(agents, 't', 'right'), start: { stage: 'fix' } }), [
      'invalid_spec',
      'start.harness',
    ]);
    // Without stages the one stage is `work`.
    const { stages: _s, ...single } = startingSpec(agents, 't', 'right');
    assert.equal(refused({ ...single, start: { stage: 'work', harness: 'right' } }), undefined);
  });

  it('is committed by the Host right after the Task is created, once, and the Task runs', async () => {
    const agents = branchAgents(tempDir());
    const host = await openHost({ state: join(agents.dir, 'state'), harnesses: agents.harnesses() as never });
    try {
      await host.supervisor.createTask(startingSpec(agents, 'self', 'right'));
      assert.equal(await host.supervisor.waitFor('self', ['completed', 'waiting']), 'completed');
      const events = host.supervisor.events('self');
      assert.deepEqual(
        events.slice(0, 2).map((e) => e.type),
        ['task.created', 'assignment.commit'],
      );
      assert.deepEqual(assignments(events), [['host', true]]);
      assert.equal(events[1]!.data['harness'], 'right');
    } finally {
      await host.stop();
    }
  });

  it('is committed when a Host next serves a Task created without it being committed (a crash between the two)', async () => {
    const agents = branchAgents(tempDir());
    const state = join(agents.dir, 'state');
    // A Host with no frontier work commits nothing of its own: the Task stays open, as a crash right after task.create leaves it.
    const bare = createSupervisor({ state });
    await bare.start();
    await bare.createTask(startingSpec(agents, 'later', 'right'));
    assert.equal(bare.getTask('later')!.state, 'open');
    await bare.stop();
    const host = await openHost({ state, harnesses: agents.harnesses() as never });
    try {
      assert.equal(await host.supervisor.waitFor('later', ['completed', 'waiting']), 'completed');
      assert.deepEqual(assignments(host.supervisor.events('later')), [['host', true]]);
    } finally {
      await host.stop();
    }
  });

  it('is not sent again when it was refused (a harness this Host does not have), at a later commit or a restart', async () => {
    const agents = branchAgents(tempDir());
    const state = join(agents.dir, 'state');
    const host = await openHost({ state, harnesses: agents.harnesses() as never });
    try {
      await host.supervisor.createTask(startingSpec(agents, 'nowhere', 'absent'));
      await journalHas(host.supervisor, 'nowhere', 'assignment.commit');
      await host.supervisor.send('nowhere', { type: 'task.steer', message: 'a commit after the refusal' });
      assert.equal(host.supervisor.getTask('nowhere')!.state, 'open');
    } finally {
      await host.stop();
    }
    const again = await openHost({ state, harnesses: agents.harnesses() as never });
    try {
      const events = again.supervisor.events('nowhere');
      assert.deepEqual(assignments(events), [['host', false]]);
      assert.equal(events.find((e) => e.type === 'assignment.commit')!.disposition.admitted, false);
      assert.equal(again.supervisor.getTask('nowhere')!.state, 'open');
    } finally {
      await again.stop();
    }
  });

  it('ordivon run waits for the Host to commit it and does not assign the stage a second time', async () => {
    const agents = branchAgents(tempDir());
    const { stages: _s, ...single } = startingSpec(agents, 'cli', 'right');
    writeFileSync(
      join(agents.dir, 'spec.json'),
      JSON.stringify({ ...single, start: { stage: 'work', harness: 'right' } }),
    );
    writeFileSync(join(agents.dir, 'ordivon.config.json'), JSON.stringify({ harnesses: agents.harnesses() }));
    const run = ordivon(
      agents.dir,
      'run',
      '--spec',
      'spec.json',
      '--stages',
      'work=right',
      '--state',
      'state',
      '--quiet',
    );
    assert.equal(run.status, 0, run.stderr);
    const host = await openHost({ state: join(agents.dir, 'state'), harnesses: {} });
    try {
      assert.equal(host.supervisor.getTask('cli')!.state, 'completed');
      assert.deepEqual(assignments(host.supervisor.events('cli')), [['host', true]]);
    } finally {
      await host.stop();
    }
  });
});
