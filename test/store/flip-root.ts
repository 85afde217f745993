import { createSupervisor } from '../../kernel/supervisor.js';
import { SPEC, driveToRunning, observeRun } from '../support/tasks.js';

/**
 * Builds a stopped state root at `root` whose `lmdb/data.mdb` has every kind of page: several
 * Tasks (branch pages in the events and objects databases), artifacts of 9–24 kB (overflow
 * pages), and enough commits that pages are freed and listed in the free list.
 */
export async function buildFlipRoot(root: string, tasks = 8): Promise<void> {
  const sup = createSupervisor({ state: root });
  await sup.start();
  for (let t = 0; t < tasks; t++) {
    const taskId = `task-${t}`;
    await sup.createTask({ ...SPEC, taskId, goal: `${SPEC.goal} (task ${t})` });
    const run = await driveToRunning(sup, taskId, 1);
    // Deterministic text (no randomness): the size decides the page layout.
    const diagnosis = JSON.stringify({ location: `alloc.js:${t}`, notes: 'x'.repeat(9_000 + 2_000 * t) });
    await observeRun(sup, taskId, 1, run, { 'diagnosis.json': diagnosis });
  }
  await sup.stop();
}
