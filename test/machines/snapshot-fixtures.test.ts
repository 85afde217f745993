import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import { TASK_MACHINE_VERSION, stateName, taskMachine } from '../../machines/index.js';

const dir = fileURLToPath(new URL('../../../test/fixtures/machines/', import.meta.url));

/**
 * Persisted snapshots of each released machine version. A change to the statechart that can no
 * longer restore one of them must bump TASK_MACHINE_VERSION (stored projections of an older
 * version are then replayed from events instead of trusted) and add a fixture for the new one.
 */
describe('persisted snapshot fixtures', () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

  it('has a fixture for the current machine version', () => {
    assert.ok(
      files.some((f) => f.startsWith(`task-v${TASK_MACHINE_VERSION}-`)),
      files.join(', '),
    );
  });

  for (const file of files) {
    const fixture = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    // An older version's stored snapshot is never restored: its Task is replayed from events.
    const skip =
      fixture.machineVersion !== TASK_MACHINE_VERSION &&
      `machine version ${fixture.machineVersion}: replayed, never restored`;
    it(`restores ${file} and continues from it`, { skip }, () => {
      const actor = createActor(taskMachine, { snapshot: fixture.snapshot }).start();
      assert.equal(stateName(actor.getSnapshot().value), fixture.state);
      assert.deepEqual(
        JSON.parse(JSON.stringify(taskMachine.getPersistedSnapshot(actor.getSnapshot()))),
        fixture.snapshot,
      );
      const next = {
        type: 'assignment.commit',
        generation: actor.getSnapshot().context.generation + 1,
        harness: 'hermes',
        purpose: 'repair',
        assignmentDigest: `sha256:${'e'.repeat(64)}`,
        revision: fixture.revision + 1,
        origin: 'external',
      } as const;
      assert.ok(actor.getSnapshot().can(next));
      actor.send(next);
      assert.deepEqual(actor.getSnapshot().value, { assigned: 'compiling' });
      actor.stop();
    });
  }
});
