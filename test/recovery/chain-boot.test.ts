import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HostError } from '../../kernel/errors.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { rewindCheckpoints } from '../../bench/checkpoint-rewind.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { readCheckpoints } from '../../recovery/checkpoint-store.js';
import { hashModules, machineCodeHash } from '../../recovery/machine-code.js';
import { rebuildAll } from '../../recovery/rebuild.js';
import { EventStore, updateMeta } from '../../store/index.js';
import { copyOf, finalStates, named } from '../bench/fixtures.js';
import { ordivonSync } from '../support/cli-sync.js';
import { flipByte, tamper } from '../support/tamper.js';
import { tempDir } from '../support/temp.js';

const TASKS = 12;
const EVENTS = 20;

/** A generated root after one boot and clean stop: every Task has a checkpoint at its head. */
async function checkpointedRoot(): Promise<string> {
  const root = await copyOf(TASKS, EVENTS);
  const sup = createSupervisor({ state: root, recovery: 'full' });
  await sup.start();
  await sup.stop();
  return root;
}

/** Rewrites the stored checkpoints of `taskIds` (all when absent) through `change`. */
async function editCheckpoints(
  root: string,
  change: (checkpoint: Record<string, unknown>) => Record<string, unknown>,
  taskIds?: string[],
): Promise<void> {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, purpose: 'test' });
  try {
    const existing = readCheckpoints(store);
    await updateMeta(store, (meta) => {
      for (const [taskId, value] of existing)
        if (!taskIds || taskIds.includes(taskId))
          meta.put('checkpoint', taskId, JSON.stringify(change(value as Record<string, unknown>)));
    });
  } finally {
    await store.close();
  }
}

async function withStore<T>(root: string, fn: (store: EventStore) => T): Promise<T> {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    return fn(store);
  } finally {
    await store.close();
  }
}

async function boot(root: string) {
  const sup = createSupervisor({ state: root });
  await sup.start();
  const report = sup.bootReport()!;
  await sup.stop();
  return report;
}

const OTHER = `sha256:${'e'.repeat(64)}`;

describe('boot from chain-verified checkpoints (invariant 7)', () => {
  it('verifies every event but replays none past checkpoints at the heads, by default', async () => {
    const root = await checkpointedRoot();
    const report = await boot(root);
    assert.equal(report.mode, 'checkpoint');
    assert.deepEqual([report.tasks, report.events, report.replayed], [TASKS, TASKS * EVENTS, 0]);
    assert.deepEqual(report.checkpoint, {
      trusted: TASKS,
      tailReplayed: 0,
      fullReplayed: 0,
      codeChanged: 0,
      headMismatch: 0,
    });
    assert.equal(report.codeHash, machineCodeHash());
  });

  it('does not trust a checkpoint from other machine code: full replay, reported, and fresh checkpoints written', async () => {
    const root = await checkpointedRoot();
    await editCheckpoints(root, (c) => ({ ...c, codeHash: OTHER }));
    const changed = await boot(root);
    assert.equal(changed.replayed, TASKS * EVENTS, 'every event replayed');
    assert.deepEqual(changed.checkpoint, {
      trusted: 0,
      tailReplayed: 0,
      fullReplayed: TASKS,
      codeChanged: TASKS,
      headMismatch: 0,
    });
    // The boot rewrote them under the running code: the next boot trusts them again.
    const stored = await withStore(root, (store) => [...readCheckpoints(store).values()]);
    assert.ok(stored.every((c) => (c as { codeHash?: string }).codeHash === machineCodeHash()));
    assert.deepEqual((await boot(root)).checkpoint?.trusted, TASKS);

    // A checkpoint written before the hash was recorded (none in it) is from other code too.
    await editCheckpoints(root, ({ codeHash: _, ...c }) => c, ['task-00000002']);
    assert.deepEqual((await boot(root)).checkpoint, {
      trusted: TASKS - 1,
      tailReplayed: 0,
      fullReplayed: 1,
      codeChanged: 1,
      headMismatch: 0,
    });
  });

  it('does not trust a checkpoint whose head digest is not the chain digest at its revision', async () => {
    const root = await checkpointedRoot();
    await editCheckpoints(root, (c) => ({ ...c, headDigest: OTHER }), ['task-00000003']);
    // At an earlier revision, with that revision's wrong digest: not in the chain either.
    await editCheckpoints(root, (c) => ({ ...c, revision: 5, headDigest: OTHER }), ['task-00000007']);
    const report = await boot(root);
    assert.deepEqual(report.checkpoint, {
      trusted: TASKS - 2,
      tailReplayed: 0,
      fullReplayed: 2,
      codeChanged: 0,
      headMismatch: 2,
    });
    assert.equal(report.replayed, 2 * EVENTS);
  });

  it('a tail replayed from a checkpoint gives the state a full replay gives', async () => {
    const root = await checkpointedRoot();
    await rewindCheckpoints(root, 4);
    const [tails, full] = await withStore(root, (store) => [
      rebuildAll(store, { checkpoints: true }),
      rebuildAll(store),
    ]);
    assert.deepEqual([tails.findings, full.findings], [[], []]);
    assert.deepEqual(tails.starts, {
      trusted: TASKS,
      tailReplayed: TASKS,
      fullReplayed: 0,
      codeChanged: 0,
      headMismatch: 0,
    });
    assert.deepEqual([tails.events, tails.replayed, full.replayed], [TASKS * EVENTS, TASKS * 4, TASKS * EVENTS]);
    assert.deepEqual(finalStates(tails), finalStates(full));
    assert.deepEqual(
      tails.tasks.map((t) => t.spec?.title),
      full.tasks.map((t) => t.spec?.title),
    );
    const report = await boot(root);
    assert.deepEqual([report.replayed, report.checkpoint?.tailReplayed], [TASKS * 4, TASKS]);
  });

  it('refuses a corrupt event inside the checkpointed prefix at boot: the chain covers it', async () => {
    const root = await checkpointedRoot();
    await tamper(root, (env) => flipByte(env, 'events', ['task-00000009', 2]));
    const { tails, full } = await withStore(root, (store) => ({
      tails: rebuildAll(store, { checkpoints: true }),
      full: rebuildAll(store),
    }));
    assert.equal(tails.findings[0]?.taskId, 'task-00000009');
    assert.equal(tails.findings[0]?.code, 'stream_corrupt');
    assert.deepEqual(named(tails), named(full));
    const sup = createSupervisor({ state: root });
    await assert.rejects(
      sup.start(),
      (e) => e instanceof HostError && e.code === 'stream_corrupt' && /task-00000009/.test(e.message),
    );
  });

  it('refuses an object missing from the checkpointed prefix at boot', async () => {
    const root = await checkpointedRoot();
    const ref = await withStore(root, (store) => {
      const early = [...store.stream('task-00000004')].find(
        ({ revision, event }) => revision < EVENTS && event.type !== 'task.created' && event.refs.length > 0,
      );
      return early!.event.refs[0]!;
    });
    await tamper(root, (env) => {
      env.openDB('objects', { encoding: 'binary' }).removeSync(ref as never);
      env.openDB('blobs', { encoding: 'binary' }).removeSync(ref as never);
    });
    const sup = createSupervisor({ state: root });
    await assert.rejects(sup.start(), (e) => e instanceof HostError && e.code === 'object_missing');
  });

  it('doctor replays the tails and says so; doctor --full replays every event', async () => {
    const root = await checkpointedRoot();
    const plain = ordivonSync(['--state', root, '--json', 'doctor']);
    assert.equal(plain.status, 0, plain.stderr);
    const tails = plain.json();
    assert.deepEqual([tails.healthy, tails.replay, tails.events, tails.replayed], [true, 'tails', TASKS * EVENTS, 0]);
    assert.equal(tails.checkpoint.trusted, TASKS);
    const full = ordivonSync(['--state', root, '--json', 'doctor', '--full']);
    assert.equal(full.status, 0, full.stderr);
    const all = full.json();
    assert.deepEqual(
      [all.healthy, all.replay, all.events, all.replayed],
      [true, 'full', TASKS * EVENTS, TASKS * EVENTS],
    );
    assert.equal(all.checkpoint, undefined);
    const text = ordivonSync(['--state', root, 'doctor']);
    assert.match(
      text.stdout,
      /^replay: tails, 0 events replayed through the statechart: 12 tasks from their checkpoint, 0 in full$/m,
    );
    assert.match(
      ordivonSync(['--state', root, 'doctor', '--full']).stdout,
      /^replay: full, 240 events replayed through the statechart$/m,
    );
  });
});

describe('machine-code hash', () => {
  const machines = new URL('../../machines/', import.meta.url);

  it('is the same in another process', () => {
    const module = pathToFileURL(fileURLToPath(new URL('../../recovery/machine-code.js', import.meta.url))).href;
    const r = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { machineCodeHash } from ${JSON.stringify(module)}; console.log(machineCodeHash());`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.stdout.trim(), machineCodeHash());
  });

  it('changes when a module the Task machine imports changes, and only names paths inside the build', () => {
    const copy = join(tempDir(), 'build');
    cpSync(fileURLToPath(new URL('../', machines)), copy, {
      recursive: true,
      filter: (source) => !source.includes('/test') && !source.includes('node_modules'),
    });
    const base = pathToFileURL(join(copy, 'machines') + '/');
    const before = hashModules(['task-machine.js', 'task-frontier.js'], base);
    assert.equal(before, machineCodeHash(), 'same bytes in another directory: same hash');
    const detail = join(copy, 'machines', 'rejection-detail.js');
    writeFileSync(detail, readFileSync(detail, 'utf8') + '\n;globalThis.x = 1;\n');
    assert.notEqual(hashModules(['task-machine.js', 'task-frontier.js'], base), before);
  });
});
