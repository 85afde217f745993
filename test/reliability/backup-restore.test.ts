import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openHost } from '../../host/host.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { hermesLikeLaunch } from '../../workloads/scripted/hermes-script.js';
import { createRuntime } from '../../runtime/index.js';
import { EventStore } from '../../store/index.js';
import { hermesLikeScript } from '../../workloads/hamilton-v1/behaviours.js';
import { loadWorkload } from '../../cli/workload.js';
import { tempDir } from '../support/temp.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));
const WRITER = fileURLToPath(new URL('../fixtures/reliability/crash-writer.js', import.meta.url));
const HOLDER = fileURLToPath(new URL('../fixtures/reliability/hold-root.js', import.meta.url));

/** Runs the real CLI in a child process (it never shares an LMDB handle with this process). */
function cli(args: string[]): Promise<{ status: number | null; json: any; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (status) => {
      let json: unknown;
      try {
        json = JSON.parse(out || stderr);
      } catch {
        json = { unparsed: out };
      }
      resolve({ status, json, stderr });
    });
  });
}

async function streams(
  root: string,
): Promise<Map<string, Array<{ revision: number; id: string; prev: string | null }>>> {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    return new Map(
      store
        .taskIds()
        .map((t) => [
          t,
          [...store.stream(t)].map(({ revision, event }) => ({ revision, id: event.id, prev: event.prev })),
        ]),
    );
  } finally {
    await store.close();
  }
}

describe('backup and restore', () => {
  it(
    'backs up a served root with jobs and workspaces; restore brings back every Task and job exactly; doctor passes',
    { timeout: 120_000 },
    async () => {
      const workload = loadWorkload('hamilton-v1');
      const root = join(tempDir('ordivon-backup-'), 'state');
      const host = await openHost({
        state: root,
        harnesses: {
          diagnose: { driver: 'acp', ...hermesLikeLaunch(hermesLikeScript(workload, 'diagnose')), timeoutMs: 60_000 },
        },
      });
      let taskIds: string[];
      const dest = join(tempDir(), 'backup');
      try {
        const sup = host.supervisor;
        const a = await sup.createTask(workload.spec);
        await sup.send(a.taskId, { type: 'assignment.commit', harness: 'diagnose', purpose: 'diagnose' });
        await sup.waitFor(a.taskId, ['waiting']);
        const b = await sup.createTask({ ...workload.spec, title: 'second' });
        await sup.send(b.taskId, { type: 'task.cancel', reason: 'not needed' });
        taskIds = [a.taskId, b.taskId];
        // the Host still holds the root (and its lock) while the backup runs
        const made = await cli(['backup', dest, '--state', root]);
        assert.equal(made.status, 0, JSON.stringify(made.json) + made.stderr);
        assert.deepEqual([made.json.tasks, made.json.dest], [2, dest]);
      } finally {
        await host.stop();
      }
      assert.ok(existsSync(join(dest, 'runtime', 'runtime.lmdb')), 'the Runtime LMDB is in the backup');
      assert.ok(!existsSync(join(dest, 'state.lock')), 'a backup carries no lock');

      const restored = join(tempDir(), 'restored');
      const back = await cli(['restore', dest, '--state', restored]);
      assert.equal(back.status, 0, JSON.stringify(back.json) + back.stderr);
      const doctor = await cli(['doctor', '--state', restored]);
      assert.deepEqual([doctor.status, doctor.json.healthy, doctor.json.tasks], [0, true, 2]);
      for (const taskId of taskIds) {
        const [orig, copy] = await Promise.all([
          cli(['show', taskId, '--events', '--state', root]),
          cli(['show', taskId, '--events', '--state', restored]),
        ]);
        assert.equal(orig.status, 0);
        // Each view names its Attempt's workspace under its own state root; everything else is equal.
        const { workspace: copyWorkspace, ...copyView } = copy.json;
        const { workspace: origWorkspace, ...origView } = orig.json;
        assert.deepEqual(copyView, origView);
        assert.deepEqual(
          [origWorkspace, copyWorkspace],
          [root, restored].map((r) => join(r, 'workspaces', taskId, 'attempt-1')),
        );
      }
      // the Runtime's job for the diagnosis dispatch came along, terminal, with its receipt
      const requestId = `${taskIds[0]}/a1/g1/run`;
      const [original, copied] = [
        await createRuntime({ root: join(root, 'runtime') }),
        await createRuntime({ root: join(restored, 'runtime') }),
      ];
      try {
        const [o, c] = [
          await original.findJobs({ clientRequestId: requestId }),
          await copied.findJobs({ clientRequestId: requestId }),
        ];
        assert.equal(o.length, 1);
        assert.deepEqual(c, o);
      } finally {
        await original.close();
        await copied.close();
      }
      assert.ok(readdirSync(join(restored, 'workspaces', taskIds[0]!)).length > 0, 'the workspace came along');
    },
  );

  it(
    'a backup taken while a writer commits continuously is a consistent prefix of every stream',
    { timeout: 120_000 },
    async () => {
      const root = join(tempDir('ordivon-backup-live-'), 'state');
      const writer = spawn(process.execPath, [WRITER, root, '99', '8'], { stdio: ['ignore', 'pipe', 'inherit'] });
      const lines = createInterface({ input: writer.stdout });
      let seen = 0;
      const warmedUp = new Promise<void>((resolve) => lines.on('line', () => ++seen === 150 && resolve()));
      await warmedUp;
      const dest = join(tempDir(), 'live-backup');
      const made = await cli(['backup', dest, '--state', root]);
      const afterBackup = seen;
      const exited = new Promise((resolve) => writer.on('close', resolve));
      writer.kill('SIGKILL');
      await exited;
      assert.equal(made.status, 0, JSON.stringify(made.json));
      assert.ok(afterBackup > 150, 'the writer was committing during the backup');

      const [copy, original] = [await streams(dest), await streams(root)];
      assert.ok(copy.size > 0);
      for (const [taskId, events] of copy) {
        const full = original.get(taskId)!;
        assert.ok(full.length >= events.length, `${taskId}: the backup is ahead of the original`);
        assert.deepEqual(events, full.slice(0, events.length), `${taskId}: the backup is not a prefix`);
      }
      assert.equal((await cli(['doctor', '--state', dest])).json.healthy, true);
    },
  );

  it(
    'refuses to overwrite: backup_exists, restore_not_empty, state_locked with --force on a held root, backup_invalid',
    { timeout: 60_000 },
    async () => {
      const root = join(tempDir('ordivon-backup-refuse-'), 'state');
      const holder = spawn(process.execPath, [HOLDER, root], { stdio: ['pipe', 'pipe', 'inherit'] });
      const lines = createInterface({ input: holder.stdout })[Symbol.asyncIterator]();
      assert.match((await lines.next()).value, /^serving/);
      try {
        const full = join(tempDir(), 'full');
        mkdirSync(full);
        writeFileSync(join(full, 'keep.txt'), 'mine');
        assert.deepEqual(await cli(['backup', full, '--state', root]).then((r) => [r.status, r.json.error.code]), [
          1,
          'backup_exists',
        ]);
        const dest = join(tempDir(), 'b');
        assert.equal((await cli(['backup', dest, '--state', root])).status, 0);
        assert.deepEqual(await cli(['restore', dest, '--state', root]).then((r) => [r.status, r.json.error.code]), [
          1,
          'restore_not_empty',
        ]);
        assert.deepEqual(
          await cli(['restore', dest, '--state', root, '--force']).then((r) => [r.status, r.json.error.code]),
          [1, 'state_locked'],
        );
        assert.deepEqual(
          await cli(['restore', full, '--state', join(tempDir(), 'x')]).then((r) => [r.status, r.json.error.code]),
          [1, 'backup_invalid'],
        );
        assert.deepEqual(readdirSync(full), ['keep.txt']);
      } finally {
        holder.stdin.end();
      }
      assert.equal((await lines.next()).value, 'stopped');
    },
  );
});
