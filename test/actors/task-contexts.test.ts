import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createHostEffects } from '../../actors/host-effects.js';
import { createSupervisor } from '../../actors/supervisor.js';
import { taskProvenance } from '../../actors/task-contexts.js';
import { LatestRejection } from '../../actors/task-runs.js';
import { createDriverPool } from '../../drivers/index.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { createRuntime } from '../../runtime/index.js';
import { EventStore } from '../../store/index.js';
import { tempDir } from '../support/temp.js';

/** A real provider process behind the `command` driver: writes findings.json in the workspace. */
const AGENT = "require('node:fs').writeFileSync('findings.json', JSON.stringify({ cause: 'x is 1' }));";

const spec = (seed: string) => ({
  taskId: 'ctx-1',
  title: 'Make x equal 2',
  goal: 'The module a.js exports x; make it 2.',
  requiredArtifacts: [{ name: 'findings.json', schema: { type: 'object', required: ['cause'] } }],
  stages: [{ name: 'investigate', produces: ['findings.json'] }],
  workspaceSeed: seed,
});

/**
 * A Host on `state` whose effects are the real ones (Context compiler, Runtime jobs, the command
 * driver on the driver pool) except that it leaves `evaluating` alone: the Task then stays where
 * an external proposal is taken, so one naming another Context is retained as `context_mismatch`.
 */
async function hostHoldingEvaluation(state: string) {
  const pool = createDriverPool({ maxThreads: 1 });
  const runtime = await createRuntime({
    root: join(state, 'runtime'),
    harness: (input, signal) => pool.run(input, { signal }),
  });
  const dir = join(state, '..');
  writeFileSync(join(dir, 'agent.cjs'), AGENT);
  const effects = createHostEffects({
    runtime,
    workspaces: join(state, 'workspaces'),
    harnesses: { a: { driver: 'command', command: process.execPath, args: [join(dir, 'agent.cjs')] } },
  });
  const supervisor = createSupervisor({
    state,
    effects: {
      perform: (task, work, signal) => (work === 'evaluate' ? Promise.resolve() : effects.perform(task, work, signal)),
    },
  });
  await supervisor.start();
  return {
    supervisor,
    async stop() {
      await supervisor.stop();
      await runtime.close();
      await pool.close();
    },
  };
}

describe('taskProvenance over a real store', { timeout: 60_000 }, () => {
  it('lists a Context compiled before read sets with trust from its source class, and a context_mismatch with the Context it named', async () => {
    const dir = tempDir();
    const seed = join(dir, 'seed');
    mkdirSync(seed);
    writeFileSync(join(seed, 'a.js'), 'export const x = 1;\n');
    const state = join(dir, 'state');
    const host = await hostHoldingEvaluation(state);
    const other = `sha256:${'0'.repeat(64)}`;
    try {
      const sup = host.supervisor;
      await sup.createTask(spec(seed));
      await sup.send('ctx-1', { type: 'assignment.commit', harness: 'a', stage: 'investigate' });
      await sup.waitFor('ctx-1', ['evaluating']);
      const refused = await sup.send('ctx-1', { type: 'completion.propose', generation: 1, contextDigest: other });
      assert.deepEqual([refused.written, refused.code], [true, 'context_mismatch']);
    } finally {
      await host.stop();
    }

    // Read back as `ordivon show` does: a read-only store, every body parsed again.
    const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
    try {
      const events = [...store.stream('ctx-1')].map(({ revision, event }) => ({ revision, ...event }));
      const context = (store.projection('ctx-1')!.snapshot as { context: Record<string, unknown> }).context;
      const { contexts, rejections } = taskProvenance(
        { events, object: (digest) => store.getObject(digest).body },
        LatestRejection.parse(context['lastRejection']),
      );
      const compile = events.find((e) => e.type === 'context.compile')!;
      assert.equal(contexts.length, 1);
      const [c] = contexts;
      assert.deepEqual(
        [c!.revision, c!.generation, c!.stage, c!.contextDigest, c!.promptDigest, c!.goalRevision, c!.format],
        [compile.revision, 1, 'investigate', compile.data['contextDigest'], null, null, 'sources'],
      );
      assert.deepEqual(
        c!.items.map((i) => [i.sourceId, i.trust, i.claim, i.dependsOn, i.location]),
        [
          ['task-spec', 'trusted', 'unverified', [], null],
          ['assignment:g1', 'trusted', 'unverified', [], null],
          ['workspace', 'untrusted', 'unverified', [], null],
        ],
      );
      assert.deepEqual(c!.items[0]!.digest, context['specDigest']);
      assert.deepEqual(c!.candidates, []);
      assert.deepEqual(rejections, [
        {
          revision: events.at(-1)!.revision,
          event: 'completion.propose',
          reason: 'context_mismatch',
          generation: 1,
          detail: `event names ${other}; current Context is ${c!.contextDigest}`,
          causes: [{ kind: 'context', named: other, current: c!.contextDigest, decidedAt: null }],
        },
      ]);
    } finally {
      await store.close();
    }
  });
});
