import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HostError } from '../../kernel/errors.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { recoverFromCheckpoints } from '../../recovery/checkpoint.js';
import { rebuildParallel, recoverFromCheckpointsParallel } from '../../recovery/parallel.js';
import { ProgressMeter, progressSum, type ProgressCount, type RecoveryProgress } from '../../recovery/progress.js';
import { machineCodeHash } from '../../recovery/machine-code.js';
import { rebuildAll } from '../../recovery/rebuild.js';
import { manualClock } from '../../kernel/clock.js';
import { createSupervisor, type SupervisorOptions } from '../../kernel/supervisor.js';
import { bootLine } from '../../cli/commands/serve.js';
import { progressText, throttledProgress } from '../../cli/cli-io.js';
import { EventStore } from '../../store/index.js';
import { rewindCheckpoints } from '../../bench/checkpoint-rewind.js';
import { copyOf, generated } from '../bench/fixtures.js';

const TASKS = 300;
const EVENTS = 12;

/** Runs `fn` with a listener and returns every report it got. */
async function reports(
  fn: (onProgress: (p: RecoveryProgress) => void) => Promise<unknown> | unknown,
): Promise<RecoveryProgress[]> {
  const seen: RecoveryProgress[] = [];
  await fn((p) => seen.push({ ...p }));
  return seen;
}

/** Every report counts up from the one before it, and the last one is `last`. */
function countsUpTo(seen: RecoveryProgress[], last: RecoveryProgress): void {
  assert.ok(seen.length >= 2, `only ${seen.length} report(s)`);
  for (let i = 1; i < seen.length; i++) {
    const [a, b] = [seen[i - 1]!, seen[i]!];
    assert.ok(
      b.tasks >= a.tasks && b.events >= a.events && (b.tasks > a.tasks || b.events > a.events),
      `report ${i} does not count up: ${JSON.stringify([a, b])}`,
    );
  }
  assert.deepEqual(seen.at(-1), last);
}

async function withStore<T>(root: string, fn: (store: EventStore) => Promise<T> | T): Promise<T> {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

describe('recovery progress', () => {
  it('ProgressMeter reports every N Tasks or M events, by count, and once more at flush', () => {
    const emitted: ProgressCount[] = [];
    const meter = new ProgressMeter((c) => emitted.push(c), { tasks: 3, events: 100 });
    for (const events of [10, 20, 30, 40, 190, 200, 210]) meter.task(events);
    meter.flush();
    meter.flush(); // nothing new: not reported again
    assert.deepEqual(emitted, [
      { tasks: 3, events: 30 },
      { tasks: 5, events: 190 }, // 160 events since the last report
      { tasks: 7, events: 210 },
    ]);
  });

  it('progressSum adds up the running counts of each thread', () => {
    const seen: RecoveryProgress[] = [];
    const report = progressSum((p) => seen.push(p), { totalTasks: 10, totalEvents: 100 });
    report(1, { tasks: 2, events: 20 });
    report(0, { tasks: 1, events: 5 });
    report(1, { tasks: 4, events: 40 }); // replaces thread 1's count
    assert.deepEqual(seen, [
      { tasks: 2, events: 20, totalTasks: 10, totalEvents: 100 },
      { tasks: 3, events: 25, totalTasks: 10, totalEvents: 100 },
      { tasks: 5, events: 45, totalTasks: 10, totalEvents: 100 },
    ]);
  });

  it('a full rebuild counts every Task and event up to the totals its heads give, on one thread and over workers', async () => {
    const root = await generated(TASKS, EVENTS);
    const all = { tasks: TASKS, totalTasks: TASKS, events: TASKS * EVENTS, totalEvents: TASKS * EVENTS };
    await withStore(root, async (store) => {
      countsUpTo(await reports((onProgress) => rebuildAll(store, { onProgress })), all);
      countsUpTo(
        await reports((onProgress) => rebuildParallel(store, { workers: 2, inThreadBelow: 0, onProgress })),
        all,
      );
    });
  });

  it('a checkpointed start counts its Tasks; the events it reports are the tails it replayed', async () => {
    const root = await copyOf(TASKS, EVENTS);
    const sup = createSupervisor({ state: root });
    await sup.start();
    await sup.stop();
    await rewindCheckpoints(root, 2);
    const tails = { tasks: TASKS, totalTasks: TASKS, events: TASKS * 2 };
    await withStore(root, async (store) => {
      countsUpTo(await reports((onProgress) => recoverFromCheckpoints(store, undefined, onProgress)), tails);
      countsUpTo(
        await reports((onProgress) =>
          recoverFromCheckpointsParallel(store, { workers: 2, inThreadBelow: 0, probeTasks: 40, onProgress }),
        ),
        tails,
      );
    });
  });

  it('the supervisor reports boot progress to onBootProgress; a listener that throws does not stop the boot', async () => {
    const root = await copyOf(TASKS, EVENTS);
    let inContext: unknown;
    const seen = await reports(async (listener) => {
      const sup = createSupervisor({
        state: root,
        onBootProgress: (p) => {
          listener(p);
          throw new Error('a listener failing');
        },
      });
      await sup.start();
      assert.equal(sup.status, 'serving');
      inContext = sup.actor.getSnapshot().context.progress;
      await sup.stop();
    });
    const all = { tasks: TASKS, totalTasks: TASKS, events: TASKS * EVENTS, totalEvents: TASKS * EVENTS };
    countsUpTo(seen, all);
    assert.deepEqual(inContext, all, 'the supervisor actor keeps the latest count (what the inspector shows)');
    assert.throws(
      () => createSupervisor({ state: root, onBootProgress: 'yes' as unknown as SupervisorOptions['onBootProgress'] }),
      (error: unknown) =>
        error instanceof HostError &&
        error.code === 'invalid_option' &&
        error.message.startsWith('supervisor option onBootProgress:'),
    );
  });

  it('the CLI writes a progress line at most once every 2 s of its clock, none in the first 2 s', () => {
    let now = 1_000;
    const lines: string[] = [];
    const listener = throttledProgress(
      (l) => lines.push(l),
      'validating, ',
      () => now,
    );
    const at = (tasks: number, events: number): RecoveryProgress => ({
      tasks,
      totalTasks: 10_000,
      events,
      totalEvents: 1_000_000,
    });
    listener(at(256, 25_600)); // 0 s: too early
    now += 1_999;
    listener(at(512, 51_200)); // 1.999 s: too early
    now += 1;
    listener(at(1_024, 102_400)); // 2 s
    now += 1_000;
    listener(at(2_048, 204_800)); // 1 s after the last line
    now += 1_000;
    listener(at(4_120, 412_000));
    assert.deepEqual(lines, [
      'validating, 1,024 of 10,000 Tasks, 102,400 of 1,000,000 events (10%)',
      'validating, 4,120 of 10,000 Tasks, 412,000 of 1,000,000 events (41%)',
    ]);
    assert.equal(progressText({ tasks: 7, totalTasks: 9, events: 70 }), '7 of 9 Tasks, 70 events');
  });

  it("bootReport says what validation did, by the supervisor's clock, in both recovery modes", async () => {
    const root = await copyOf(TASKS, EVENTS);
    const { objects } = await withStore(root, (store) => rebuildAll(store));
    const clock = manualClock();
    const full = createSupervisor({ state: root, clock, recovery: 'full' });
    assert.equal(full.bootReport(), null, 'nothing before start');
    await full.start();
    // The manual clock does not move by itself: validation took 0 ms by it.
    assert.deepEqual(full.bootReport(), {
      mode: 'full',
      tasks: TASKS,
      events: TASKS * EVENTS,
      objects,
      replayed: TASKS * EVENTS,
      codeHash: machineCodeHash(),
      workers: 0,
      ms: 0,
    });
    assert.deepEqual(
      full.actor.getSnapshot().context.boot,
      full.bootReport(),
      'the supervisor actor holds it (what the inspector shows)',
    );
    await full.stop();
    // The default: every event verified, none replayed past the checkpoints the full boot wrote.
    const checkpointed = createSupervisor({ state: root, clock });
    await checkpointed.start();
    assert.deepEqual(checkpointed.bootReport(), {
      mode: 'checkpoint',
      tasks: TASKS,
      events: TASKS * EVENTS,
      objects,
      replayed: 0,
      codeHash: machineCodeHash(),
      workers: 0,
      ms: 0,
      checkpoint: { trusted: TASKS, tailReplayed: 0, fullReplayed: 0, codeChanged: 0, headMismatch: 0 },
    });
    await checkpointed.stop();
    assert.equal(
      bootLine(checkpointed.bootReport()!),
      `${TASKS} Tasks, ${(TASKS * EVENTS).toLocaleString('en-US')} events in 0.0 s, 0 replayed: ${TASKS} from checkpoints, 0 of them with a tail, 0 in full`,
    );
    const hash = machineCodeHash();
    assert.equal(
      bootLine({
        mode: 'full',
        tasks: 10_000,
        events: 1_000_000,
        objects: 742_628,
        replayed: 1_000_000,
        codeHash: hash,
        workers: 2,
        ms: 9_804,
      }),
      '10,000 Tasks, 1,000,000 events in 9.8 s, full replay on 2 workers',
    );
    assert.equal(
      bootLine({
        mode: 'checkpoint',
        tasks: 10,
        events: 1_000,
        objects: 700,
        replayed: 1_000,
        codeHash: hash,
        workers: 0,
        ms: 100,
        checkpoint: { trusted: 0, tailReplayed: 0, fullReplayed: 10, codeChanged: 10, headMismatch: 0 },
      }),
      '10 Tasks, 1,000 events in 0.1 s, 1,000 replayed: 0 from checkpoints, 0 of them with a tail, 10 in full (10 with checkpoints from other machine code: full replay)',
    );
  });
});
