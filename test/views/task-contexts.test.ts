import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { FrontierRunner, TaskHandle } from '../../kernel/frontier-runner.js';
import { createFrontierWork } from '../../frontier/frontier-work.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { taskProvenance } from '../../views/task-contexts.js';
import { LatestRejection } from '../../views/task-runs.js';
import { createDriverPool } from '../../drivers/index.js';
import { OBJECT_KINDS, type ReadSetContext, type TaskSpecInput } from '../../objects/index.js';
import { createRuntime } from '../../runtime/index.js';
import { EventStore, digestOf } from '../../store/index.js';
import { runFixture } from '../cli/run-fixture.js';

/** What the Context compiler wrote before read sets: its sources with a trust class, and the prompt inside. */
function sourcesContext(taskId: string, generation: number, readSet: ReadSetContext, prompt: string) {
  const kept = readSet.items.filter(
    (i) => ['task-spec', 'assignment', 'workspace'].includes(i.sourceId) || i.sourceId.startsWith('evidence:'),
  );
  return {
    taskId,
    generation,
    sources: kept.map((i) => ({
      id: i.sourceId === 'assignment' ? `assignment:g${generation}` : i.sourceId,
      digest: i.digest,
      trust: i.sourceId === 'workspace' ? 'workspace' : i.sourceId.startsWith('evidence:') ? 'evidence' : 'host',
      reason: i.selectedBy,
    })),
    prompt,
  };
}

/**
 * The Host's own effects, except that generation 1's Context is committed in the shape an earlier
 * Host wrote (as a state root from before read sets holds it); the run, its admission and later
 * generations are the current Host's.
 */
function upgradedHost(effects: FrontierRunner): FrontierRunner {
  return {
    perform(task, work, signal) {
      if (work !== 'compile_context' || task.context.generation !== 1) return effects.perform(task, work, signal);
      const handle: TaskHandle = {
        ...task,
        send(event, attachments = {}) {
          const objects = attachments.objects ?? [];
          const readSet = objects.find((o) => o.kind === 'context')!.body as ReadSetContext;
          const prompt = (objects.find((o) => o.kind === 'prompt')!.body as { text: string }).text;
          const body = sourcesContext(task.taskId, 1, readSet, prompt);
          const contextDigest = digestOf({ kind: 'context', body });
          return task.send(
            { type: 'context.compile', generation: 1, contextDigest },
            { objects: [{ kind: 'context', body }] },
          );
        },
      };
      return effects.perform(handle, work, signal);
    },
  };
}

describe('taskProvenance over a real store', { timeout: 60_000 }, () => {
  it('shows a Context compiled before read sets (trust from its source class, claims unverified) beside a read set compiled after the upgrade', async () => {
    // Real provider processes behind the command driver: `investigate` writes findings.json, `fix` nothing.
    const f = runFixture();
    f.configure('fix-nothing');
    const agent = (mode: string) => ({
      driver: 'command' as const,
      command: process.execPath,
      args: [join(f.dir, 'agent.cjs'), mode],
    });
    const pool = createDriverPool({ maxThreads: 1 });
    const runtime = await createRuntime({
      root: join(f.state, 'runtime'),
      harness: (input, signal) => pool.run(input, { signal }),
    });
    const effects = createFrontierWork({
      runtime,
      workspaces: join(f.state, 'workspaces'),
      harnesses: { a: agent('investigate'), b: agent('fix-nothing') },
    });
    const sup = createSupervisor({ state: f.state, frontier: upgradedHost(effects) });
    try {
      await sup.start();
      await sup.createTask(JSON.parse(readFileSync(f.spec, 'utf8')) as TaskSpecInput);
      await sup.send('run-1', { type: 'assignment.commit', harness: 'a', stage: 'investigate' });
      assert.equal(await sup.waitFor('run-1', ['waiting', 'completed']), 'waiting');
      await sup.send('run-1', { type: 'assignment.commit', harness: 'b', stage: 'fix' });
      assert.equal(await sup.waitFor('run-1', ['waiting', 'completed']), 'waiting');
    } finally {
      await sup.stop();
      await runtime.close();
      await pool.close();
    }

    // Read back as `ordivon show` does: a read-only store, every body parsed again.
    const store = EventStore.open({ root: f.state, kinds: OBJECT_KINDS, readOnly: true });
    try {
      const events = [...store.stream('run-1')].map(({ revision, event }) => ({ revision, ...event }));
      const context = (store.projection('run-1')!.snapshot as { context: Record<string, unknown> }).context;
      const { contexts, rejections } = taskProvenance(
        { events, object: (digest) => store.getObject(digest).body },
        LatestRejection.parse(context['lastRejection']),
      );
      const compiles = events.filter((e) => e.type === 'context.compile');
      assert.deepEqual(
        contexts.map((c) => [c.revision, c.generation, c.stage, c.format, c.goalRevision, c.promptDigest]),
        [
          [compiles[0]!.revision, 1, 'investigate', 'sources', null, null],
          [compiles[1]!.revision, 2, 'fix', 'read-set', 1, compiles[1]!.data['promptDigest']],
        ],
      );
      assert.deepEqual(
        contexts[0]!.items.map((i) => [i.sourceId, i.trust, i.claim, i.dependsOn]),
        [
          ['task-spec', 'trusted', 'unverified', []],
          ['assignment:g1', 'trusted', 'unverified', []],
          ['workspace', 'untrusted', 'unverified', []],
        ],
      );
      assert.equal(contexts[0]!.items[0]!.digest, context['specDigest']);
      assert.deepEqual(
        contexts[1]!.items.map((i) => [i.sourceId, i.trust, i.claim]),
        [
          ['goal', 'trusted', 'asserted'],
          ['task-spec', 'trusted', 'asserted'],
          ['assignment', 'trusted', 'asserted'],
          ['workspace', 'untrusted', 'verified'],
          ['evidence:findings.json', 'untrusted', 'unverified'],
        ],
      );
      assert.deepEqual(
        rejections.map((r) => [r.reason, r.causes]),
        [['missing_artifact', undefined]],
        'a code whose causes the journal does not name has none',
      );
    } finally {
      await store.close();
    }
  });
});
