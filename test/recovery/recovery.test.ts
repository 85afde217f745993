import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RootDatabase } from 'lmdb';
import { HostError } from '../../kernel/errors.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { tempDir } from '../support/temp.js';
import { flipByte, tamper, twoTaskRoot } from '../support/tamper.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));

let pristine: string;
let specDigest: string;
let requestId: string;

/** A healthy state root with two Tasks; each case tampers with its own copy. */
before(async () => {
  ({ root: pristine, specDigest, requestId } = await twoTaskRoot());
});

function copyOfPristine(): string {
  const root = join(tempDir(), 'state');
  cpSync(pristine, root, { recursive: true });
  return root;
}

function doctor(
  root: string,
  ...flags: string[]
): {
  status: number;
  report: { healthy: boolean; findings: Array<{ code: string; taskId?: string; revision?: number; object?: string }> };
} {
  const result = spawnSync(process.execPath, [CLI, 'doctor', '--state', root, '--json', ...flags], {
    encoding: 'utf8',
  });
  // Unhealthy is an error: the report's fields are in the error object, on stderr.
  return {
    status: result.status!,
    report: result.stdout ? JSON.parse(result.stdout) : JSON.parse(result.stderr).error,
  };
}

const CASES: Array<{
  name: string;
  code: string;
  damage: (env: RootDatabase) => void;
  names: { taskId: string; revision?: number; object?: RegExp };
}> = [
  {
    name: 'a flipped byte inside an object',
    code: 'object_corrupt',
    damage: (env) => flipByte(env, 'objects', specDigest),
    names: { taskId: 'task-a', revision: 1, object: /^sha256:/ },
  },
  {
    name: 'a deleted middle event',
    code: 'stream_gap',
    damage: (env) => env.openDB('events', {}).removeSync(['task-a', 3] as never),
    names: { taskId: 'task-a', revision: 3, object: /event 3/ },
  },
  {
    name: 'an altered projection',
    code: 'projection_drift',
    damage: (env) => {
      const db = env.openDB('projections', { useRecords: false } as never);
      const p = db.get('task-b') as { state: string; snapshot: { context: { generation: number } } };
      db.putSync('task-b', { ...p, snapshot: { ...p.snapshot, context: { ...p.snapshot.context, generation: 7 } } });
    },
    names: { taskId: 'task-b', object: /projection/ },
  },
  {
    name: 'two Tasks claiming one clientRequestId',
    code: 'identity_conflict',
    damage: (env) => env.openDB('indexes', {}).putSync(['request', requestId, 'task-b'] as never, { revision: 4 }),
    names: { taskId: 'task-a,task-b', object: /^request / },
  },
  {
    name: 'a flipped byte inside an event',
    code: 'stream_corrupt',
    damage: (env) => flipByte(env, 'events', ['task-a', 2]),
    names: { taskId: 'task-a' },
  },
];

describe('boot refuses tampered state', () => {
  it('boots and doctors the untouched copy as healthy', async () => {
    const root = copyOfPristine();
    const sup = createSupervisor({ state: root });
    await sup.start();
    assert.deepEqual(
      sup.listTasks().map((t) => [t.taskId, t.state]),
      [
        ['task-a', 'evaluating'],
        ['task-b', 'assigned.running'],
      ],
    );
    await sup.stop();
    const { status, report } = doctor(root);
    assert.deepEqual([status, report.healthy, report.findings], [0, true, []]);
    const full = doctor(root, '--full');
    assert.deepEqual([full.status, full.report.healthy, full.report.findings], [0, true, []]);
  });

  for (const c of CASES) {
    it(`fails boot with ${c.code} on ${c.name}, and doctor reports the same`, async () => {
      const root = copyOfPristine();
      await tamper(root, c.damage);
      const sup = createSupervisor({ state: root });
      await assert.rejects(sup.start(), (e) => e instanceof HostError && e.code === c.code);
      assert.equal(sup.status, 'failed');
      const finding = sup.failure!.findings.find((f) => f.code === c.code)!;
      assert.equal(finding.taskId, c.names.taskId);
      if (c.names.revision !== undefined) assert.equal(finding.revision, c.names.revision);
      if (c.names.object) assert.match(finding.object ?? '', c.names.object);

      const { status, report } = doctor(root);
      assert.equal(status, 1);
      assert.equal(report.healthy, false);
      assert.ok(
        report.findings.some((f) => f.code === c.code && f.taskId === c.names.taskId),
        JSON.stringify(report.findings),
      );
      // `doctor --full` does the same checks on worker threads: the same findings
      const full = doctor(root, '--full');
      assert.equal(full.status, 1);
      const named = (fs: typeof report.findings) => fs.map((f) => `${f.code} ${f.taskId} ${f.revision ?? '-'}`).sort();
      assert.deepEqual(named(full.report.findings), named(report.findings));
      // the root is released after a failed boot: a healthy copy elsewhere is unaffected, and this one can be doctored again
      execFileSync(process.execPath, [CLI, 'list', '--state', root]);
    });
  }
});
