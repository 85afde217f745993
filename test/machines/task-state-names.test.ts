import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActor } from 'xstate';
import {
  FINAL_TASK_STATES,
  RESTING_TASK_STATES,
  TASK_STATE_NAMES,
  isTaskState,
  snapshotView,
  taskFrontier,
  taskMachine,
  type FrontierWork,
  type TaskStateName,
} from '../../machines/index.js';

interface Config {
  states?: Record<string, Config>;
  tags?: string[];
  type?: string;
}

/** The leaf states of the machine's raw config by dotted name, with their tags: read apart from the state nodes. */
function leavesOf(config: Config, prefix = ''): Array<[string, string[]]> {
  return Object.entries(config.states ?? {}).flatMap(([key, child]) => {
    const name = prefix ? `${prefix}.${key}` : key;
    return child.states ? leavesOf(child, name) : [[name, child.tags ?? []] as [string, string[]]];
  });
}

/**
 * Every state the Host names, with the work it owes there. Typed with the machine's own state
 * names, so a state added, renamed or removed in the machine fails to compile here.
 */
const FRONTIER: Record<TaskStateName, FrontierWork> = {
  new: 'none',
  open: 'none',
  'assigned.compiling': 'compile_context',
  'assigned.ready': 'dispatch',
  'assigned.dispatching': 'confirm_dispatch',
  'assigned.unknown': 'reconcile',
  'assigned.running': 'observe_run',
  'assigned.branching': 'join',
  evaluating: 'evaluate',
  waiting: 'none',
  'authorizing.escalating': 'escalate_authority',
  'authorizing.held': 'none',
  acting: 'act',
  effecting: 'confirm_effect',
  'effect_unknown.checking': 'reconcile_effect',
  'effect_unknown.escalating': 'escalate_effect',
  'effect_unknown.held': 'none',
  stale: 'rerun',
  verifying: 'verify',
  blocked: 'none',
  completed: 'none',
  cancelled: 'none',
};

const valueOf = (name: string) => {
  const [parent, child] = name.split('.');
  return child === undefined ? parent! : { [parent!]: child };
};

describe('Task state names and what the Host owes in each state', () => {
  const leaves = leavesOf(taskMachine.config as Config);

  it("lists every leaf state of the machine's config, and nothing else, as a TaskStateName", () => {
    assert.deepEqual(
      [...TASK_STATE_NAMES],
      leaves.map(([name]) => name),
    );
    assert.deepEqual(Object.keys(FRONTIER).sort(), [...TASK_STATE_NAMES].sort());
  });

  it('reads each state’s frontier from its tag', () => {
    for (const name of TASK_STATE_NAMES) assert.equal(taskFrontier(valueOf(name)), FRONTIER[name], name);
    assert.equal(taskFrontier('no_such_state'), 'none');
  });

  it('tags every leaf but new with exactly one of its frontier work or resting', () => {
    for (const [name, tags] of leaves) {
      const owed = tags.filter((t) => t === 'resting' || t.startsWith('work:'));
      assert.deepEqual(owed.length, name === 'new' ? 0 : 1, `${name}: ${tags.join(', ')}`);
    }
  });

  it('lists as resting the states tagged resting, as final the final states, both without frontier work', () => {
    assert.deepEqual(
      [...RESTING_TASK_STATES],
      leaves.filter(([, tags]) => tags.includes('resting')).map(([name]) => name),
    );
    assert.deepEqual([...RESTING_TASK_STATES].sort(), [
      'authorizing.held',
      'blocked',
      'cancelled',
      'completed',
      'effect_unknown.held',
      'open',
      'waiting',
    ]);
    assert.deepEqual([...FINAL_TASK_STATES], ['completed', 'cancelled']);
    for (const name of RESTING_TASK_STATES) assert.equal(FRONTIER[name], 'none', name);
  });

  it("gives a live snapshot the same work through hasTag as through the state's name", () => {
    const actor = createActor(taskMachine).start();
    actor.send({
      type: 'task.created',
      taskId: 't1',
      attempt: 1,
      specDigest: `sha256:${'a'.repeat(64)}`,
      requiredArtifacts: [],
      revision: 1,
      origin: 'host',
    });
    const snapshot = actor.getSnapshot();
    assert.equal(snapshot.hasTag('resting'), true);
    assert.equal(snapshot.hasTag('work:dispatch'), false);
    assert.deepEqual(snapshotView(snapshot), { state: 'open', frontier: 'none' });
    actor.stop();
  });

  it('compares a state with typed names; a misspelled name does not compile', () => {
    assert.equal(isTaskState('cancelled', 'completed', 'cancelled'), true);
    assert.equal(isTaskState('assigned.ready', 'assigned.running'), false);
    // @ts-expect-error: no state is named `canceled`; tsc fails here if one ever is.
    assert.equal(isTaskState('cancelled', 'canceled'), false);
    // @ts-expect-error: a compound state is not a leaf state's name.
    const compound: TaskStateName = 'assigned';
    assert.equal(TASK_STATE_NAMES.includes(compound), false);
    // @ts-expect-error: the tags are typed through setup; no such work.
    assert.equal(createActor(taskMachine).getSnapshot().hasTag('work:dispatchh'), false);
  });
});
