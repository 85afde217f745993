import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import type { RootDatabase } from 'lmdb';
import { HostError } from '../../kernel/errors.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { idleCores } from '../../recovery/idle-cores.js';
import { rebuildParallel } from '../../recovery/parallel.js';
import { rebuildAll } from '../../recovery/rebuild.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { EventStore } from '../../store/index.js';
import { copyOf, finalStates, generated, named } from '../bench/fixtures.js';
import { flipByte, tamper } from '../support/tamper.js';

const TASKS = 24;
const EVENTS = 40;

async function both(root: string) {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    return { inThread: rebuildAll(store), parallel: await rebuildParallel(store, { workers: 2, inThreadBelow: 0 }) };
  } finally {
    await store.close();
  }
}

/** Facts of the healthy root the damage cases refer to (computed once). */
let known:
  | Promise<{
      specOf10: string;
      assignmentOf12: string;
      evidence: { taskId: string; blob: string };
      request: string;
      requestOwner: string;
    }>
  | undefined;
const facts = () => (known ??= readFacts());
async function readFacts() {
  const { inThread } = await both(await generated(TASKS, EVENTS));
  const task = (id: string) => inThread.tasks.find((t) => t.taskId === id)!.snapshot.context;
  const owner = inThread.tasks.find((t) => t.snapshot.context.dispatch !== null && t.taskId !== 'task-00000001')!;
  const holder = inThread.tasks.find(
    (t) => t.taskId > 'task-00000012' && Object.keys(t.snapshot.context.evidence).length > 0,
  )!;
  return {
    specOf10: task('task-00000010').specDigest!,
    assignmentOf12: task('task-00000012').assignment!.digest,
    evidence: { taskId: holder.taskId, blob: Object.values(holder.snapshot.context.evidence)[0]!.digest },
    request: owner.snapshot.context.dispatch!.clientRequestId,
    requestOwner: owner.taskId,
  };
}

describe('rebuildParallel', () => {
  it('takes worker threads only when a core is idle now, and says how many did the work', async () => {
    const root = await generated(TASKS, EVENTS);
    const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
    try {
      const samples = (...idle: number[]) => {
        const taken: number[] = [];
        const idleCores = async () => {
          const next = idle[taken.length]!;
          taken.push(next);
          return next;
        };
        return { taken, idleCores };
      };
      const busy = samples(0.4, 0.7);
      const burst = samples(0.2, 1.6);
      const idle = samples(1.6);
      const reports = [];
      for (const s of [busy, burst, idle])
        reports.push(await rebuildParallel(store, { inThreadBelow: 0, idleCores: s.idleCores }));
      const cores = Math.min(availableParallelism(), 8);
      const workers = cores >= 2 ? cores : 0;
      assert.deepEqual(
        reports.map((r) => r.workers),
        [0, workers, workers],
      );
      // A busy first sample is looked at once more; an idle one is not.
      assert.deepEqual([busy.taken, burst.taken, idle.taken], [[0.4, 0.7], [0.2, 1.6], [1.6]]);
      assert.deepEqual(finalStates(reports[2]!), finalStates(reports[0]!));
      const sampled = await idleCores(20);
      assert.ok(Number.isFinite(sampled) && sampled >= 0, `idleCores() gave ${sampled}`);
    } finally {
      await store.close();
    }
  });

  it("counts idle cores as idle CPU time, plus this process's own, over elapsed time, over the window it waited", async () => {
    // An injected probe: clock, idle and own counters move only when the sample waits.
    const probe = (idlePerMs: number, counterStep = 0, ownPerMs = 0) => {
      let clock = 1_000;
      let idle = 50_000;
      let own = 7_000;
      return {
        idleMs: () => idle,
        ownMs: () => own,
        now: () => clock,
        wait: async (ms: number) => {
          clock += ms;
          idle += idlePerMs * ms + counterStep;
          own += ownPerMs * ms;
        },
      };
    };
    assert.equal(await idleCores(50, probe(1.5)), 1.5);
    assert.equal(await idleCores(50, probe(0)), 0);
    assert.equal(await idleCores(40, probe(2)), 2);
    // This process's own threads (warm workers loading) busy on one core of two: both still count.
    assert.equal(await idleCores(50, probe(1, 0, 1)), 2);
    // Another process busy on one core while this one waits: one.
    assert.equal(await idleCores(50, probe(1, 0, 0)), 1);
    // Counters that go backwards (a CPU taken offline) read as no idle time, never a negative count.
    assert.equal(await idleCores(50, probe(0, -500)), 0);
    // A sample that took no time says nothing is idle (no division by zero).
    assert.equal(await idleCores(0, probe(1)), 0);
  });

  it('rebuilds exactly what rebuildAll rebuilds, over two worker threads', async () => {
    const { inThread, parallel } = await both(await generated(TASKS, EVENTS));
    assert.deepEqual(inThread.findings, []);
    assert.deepEqual(parallel.findings, []);
    assert.deepEqual(
      [parallel.events, parallel.objects, parallel.tasks.length],
      [inThread.events, inThread.objects, TASKS],
    );
    assert.deepEqual(finalStates(parallel), finalStates(inThread));
    assert.deepEqual(
      parallel.tasks.map((t) => [t.taskId, t.headDigest, t.spec?.title]),
      inThread.tasks.map((t) => [t.taskId, t.headDigest, t.spec?.title]),
    );
  });

  type Facts = Awaited<ReturnType<typeof facts>>;
  const cases: Array<{
    name: string;
    code: string;
    taskId: string | RegExp | ((f: Facts) => string);
    damage: (env: RootDatabase, f: Facts) => void;
  }> = [
    {
      name: 'a deleted middle event',
      code: 'stream_gap',
      taskId: 'task-00000005',
      damage: (env) => env.openDB('events', {}).removeSync(['task-00000005', 7] as never),
    },
    {
      name: 'a flipped byte inside an event of the second range',
      code: 'stream_corrupt',
      taskId: 'task-00000020',
      damage: (env) => flipByte(env, 'events', ['task-00000020', 3]),
    },
    {
      name: 'an altered projection',
      code: 'projection_drift',
      taskId: 'task-00000002',
      damage: (env) => {
        const db = env.openDB('projections', { useRecords: false } as never);
        const p = db.get('task-00000002') as { snapshot: { context: Record<string, unknown> } };
        db.putSync('task-00000002', {
          ...p,
          snapshot: { ...p.snapshot, context: { ...p.snapshot.context, generation: 99 } },
        });
      },
    },
    {
      name: 'a flipped byte inside a Task spec object',
      code: 'object_corrupt',
      taskId: 'task-00000010',
      damage: (env, f) => flipByte(env, 'objects', f.specOf10),
    },
    // Objects other than Task specs are checked by digest alone, on lmdb's read buffer (EventStore.storedDigest).
    {
      name: 'a flipped byte inside an Assignment object',
      code: 'object_corrupt',
      taskId: 'task-00000012',
      damage: (env, f) => flipByte(env, 'objects', f.assignmentOf12),
    },
    {
      name: 'a deleted artifact blob',
      code: 'object_missing',
      taskId: (f) => f.evidence.taskId,
      damage: (env, f) => env.openDB('blobs', { encoding: 'binary' }).removeSync(f.evidence.blob),
    },
    {
      name: 'a removed head',
      code: 'stream_gap',
      taskId: 'task-00000015',
      damage: (env) => env.openDB('heads', {}).removeSync('task-00000015'),
    },
    // A map of two entries that ends after one key: no cursor over the heads can decode it (a boot
    // used to fail here with an uncoded boot_failed while planning the worker ranges).
    {
      name: 'a head that cannot be decoded',
      code: 'stream_corrupt',
      taskId: 'task-00000007',
      damage: (env) =>
        env.openDB('heads', { encoding: 'binary' }).putSync('task-00000007', Buffer.from([0x82, 0xa1, 0x61])),
    },
    {
      name: 'a request id claimed by a second Task',
      code: 'identity_conflict',
      taskId: /,/,
      damage: (env, f) =>
        env.openDB('indexes', {}).putSync(['request', f.request, 'task-00000001'] as never, { revision: 2 }),
    },
  ];

  for (const c of cases) {
    it(`reports ${c.code} for ${c.name} exactly as rebuildAll does, and boot refuses the root`, async () => {
      const f = await facts();
      const root = await copyOf(TASKS, EVENTS);
      await tamper(root, (env) => c.damage(env, f));
      const { inThread, parallel } = await both(root);
      assert.deepEqual(named(parallel).sort(), named(inThread).sort());
      const hit = parallel.findings.find((x) => x.code === c.code);
      assert.ok(hit, named(parallel).join('\n'));
      if (c.taskId instanceof RegExp) assert.match(hit.taskId ?? '', c.taskId);
      else assert.equal(hit.taskId, typeof c.taskId === 'string' ? c.taskId : c.taskId(f));
      // Every other Task is still verified: one damaged record never hides the rest. (An object or
      // identity finding does not stop its Task's replay, as in the core commit's rebuildAll.)
      assert.equal(
        parallel.tasks.length,
        ['identity_conflict', 'object_corrupt', 'object_missing'].includes(c.code) ? TASKS : TASKS - 1,
      );
      const sup = createSupervisor({ state: root });
      await assert.rejects(
        sup.start(),
        (e) =>
          e instanceof HostError &&
          e.code === sup.failure!.code &&
          sup.failure!.findings.some((x) => x.code === c.code),
      );
    });
  }
});
