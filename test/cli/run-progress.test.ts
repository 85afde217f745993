import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { manualClock } from '../../kernel/clock.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { HEARTBEAT_MS, followTask } from '../../cli/run-progress.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

describe("ordivon run's progress lines", () => {
  const sup = createSupervisor({ state: tempDir() });
  after(() => sup.stop());

  it('says every HEARTBEAT_MS that a stage is still working, and nothing once the Task rests', async () => {
    await sup.start();
    const { taskId } = await sup.createTask({ ...SPEC, taskId: 'beat-1' });
    const clock = manualClock();
    const lines: string[] = [];
    const unfollow = followTask(sup, taskId, (l) => lines.push(l), {
      heartbeat: { rest: ['open', 'waiting', 'completed', 'cancelled', 'blocked'], clock },
    });
    try {
      clock.advance(HEARTBEAT_MS);
      assert.deepEqual(lines, [], 'an open Task is at rest: no heartbeat');
      // A bare supervisor leaves the Assignment at its frontier: the stage is "working".
      const sent = await sup.send(taskId, { type: 'assignment.commit', harness: 'codex' });
      assert.equal(sent.admitted, true, sent.detail);
      assert.equal(lines.length, 1, 'one line for the commit');
      clock.advance(HEARTBEAT_MS - 1);
      assert.equal(lines.length, 1, 'not before HEARTBEAT_MS after the last line');
      clock.advance(1);
      assert.match(lines[1] ?? '', /^ {2}\S+ g1\s+still assigned\.compiling: 10 s since assigned to codex$/);
      clock.advance(HEARTBEAT_MS);
      assert.match(lines[2] ?? '', /still assigned\.compiling: 20 s since assigned to codex$/);
      await sup.send(taskId, { type: 'task.cancel', reason: 'done with it' });
      const settled = lines.length;
      clock.advance(3 * HEARTBEAT_MS);
      assert.equal(lines.length, settled, 'a cancelled Task rests: no more heartbeats');
    } finally {
      unfollow();
    }
    assert.equal(clock.timers, 0, 'unfollow cancels the heartbeat timer');
  });
});
