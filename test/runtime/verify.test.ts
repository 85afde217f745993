import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { isRuntimeError, sourceDigest, type Runtime, type Verification } from '../../runtime/index.js';
import { openRuntime, sha256, tempRoot } from './support.js';

const CHECK = 'grep -q fixed src/lib.txt\n';

function seed(ws: string): void {
  mkdirSync(join(ws, 'src'));
  mkdirSync(join(ws, 'tests'));
  mkdirSync(join(ws, 'node_modules'));
  writeFileSync(join(ws, 'src/lib.txt'), 'fixed\n');
  writeFileSync(join(ws, 'tests/check.sh'), CHECK);
  writeFileSync(join(ws, 'completion.json'), '{"done":true}');
  writeFileSync(join(ws, 'node_modules/dep.js'), 'junk');
}

let counter = 0;
async function verifyOnce(rt: Runtime, ws: string, extra: Record<string, unknown> = {}): Promise<Verification> {
  const { jobId } = await rt.verify({
    clientRequestId: `req-verify-${++counter}`,
    workspace: ws,
    command: 'sh',
    args: ['tests/check.sh'],
    frozenTests: ['tests/check.sh'],
    sourceExclude: ['completion.json'],
    timeoutMs: 20_000,
    ...extra,
  });
  const record = await rt.observe(jobId);
  assert.ok(record.verification, `job ${jobId} (${record.state}) carries a verification`);
  return record.verification;
}

async function setup(t: TestContext) {
  const { state, ws } = tempRoot(t);
  seed(ws);
  return { ws, rt: await openRuntime(t, { root: state }) };
}

describe('acceptance verification', () => {
  it('reports a passing run with the digests the Host can recompute independently', async (t) => {
    const { ws, rt } = await setup(t);
    const v = await verifyOnce(rt, ws);
    assert.equal(v.exitCode, 0);
    assert.equal(v.passed, true);
    assert.equal(v.sourceDigest, await sourceDigest(ws, { exclude: ['completion.json'] }));
    assert.equal(v.sourceDigestAfter, v.sourceDigest);
    assert.deepEqual(v.frozenTestDigests, { 'tests/check.sh': sha256(CHECK) });
    assert.deepEqual(v.frozenTestRefusals, {});
  });

  it('reports a failing run as not passed with its exit code', async (t) => {
    const { ws, rt } = await setup(t);
    writeFileSync(join(ws, 'src/lib.txt'), 'broken\n');
    const v = await verifyOnce(rt, ws);
    assert.equal(v.exitCode, 1);
    assert.equal(v.passed, false);
  });

  it('changes the source digest with source or frozen tests, never with artifacts or junk', async (t) => {
    const { ws, rt } = await setup(t);
    const base = await verifyOnce(rt, ws);

    writeFileSync(join(ws, 'completion.json'), '{"done":false}');
    writeFileSync(join(ws, 'node_modules/dep.js'), 'other junk');
    const afterArtifact = await verifyOnce(rt, ws);
    assert.equal(afterArtifact.sourceDigest, base.sourceDigest);
    assert.deepEqual(afterArtifact.frozenTestDigests, base.frozenTestDigests);

    writeFileSync(join(ws, 'src/lib.txt'), 'fixed and more\n');
    const afterSource = await verifyOnce(rt, ws);
    assert.notEqual(afterSource.sourceDigest, base.sourceDigest);
    assert.deepEqual(afterSource.frozenTestDigests, base.frozenTestDigests);

    writeFileSync(join(ws, 'tests/check.sh'), CHECK + 'true\n');
    const afterTest = await verifyOnce(rt, ws);
    assert.notEqual(afterTest.frozenTestDigests['tests/check.sh'], base.frozenTestDigests['tests/check.sh']);
    assert.notEqual(afterTest.sourceDigest, afterSource.sourceDigest);
  });

  it('does not pass when a frozen test is missing, naming the refusal', async (t) => {
    const { ws, rt } = await setup(t);
    const v = await verifyOnce(rt, ws, { frozenTests: ['tests/check.sh', 'tests/gone.sh'] });
    assert.equal(v.exitCode, 0);
    assert.equal(v.passed, false);
    assert.equal(v.frozenTestDigests['tests/gone.sh'], null);
    assert.deepEqual(v.frozenTestRefusals, { 'tests/gone.sh': 'artifact_missing' });
  });

  it('does not pass when the run itself modifies the source', async (t) => {
    const { ws, rt } = await setup(t);
    const v = await verifyOnce(rt, ws, { args: ['-c', 'echo patched >> src/lib.txt'] });
    assert.equal(v.exitCode, 0);
    assert.equal(v.passed, false);
    assert.notEqual(v.sourceDigestAfter, v.sourceDigest);
  });

  it('rejects a frozen test path that leaves the workspace with invalid_dispatch naming it', async (t) => {
    const { ws, rt } = await setup(t);
    await assert.rejects(
      rt.verify({
        clientRequestId: 'req-v-bad',
        workspace: ws,
        command: 'true',
        frozenTests: ['tests/../../x'],
        timeoutMs: 1_000,
      }),
      (error) =>
        isRuntimeError(error, 'invalid_dispatch') &&
        error.path === 'frozenTests.0' &&
        error.message.includes('frozenTests.0'),
    );
    assert.deepEqual(await rt.findJobs({ clientRequestId: 'req-v-bad' }), []);
  });

  it('counts only included paths as source when sourceInclude is given', async (t) => {
    const { ws } = tempRoot(t);
    seed(ws);
    const include = { include: ['src/**', 'tests/*.sh'] };
    const before = await sourceDigest(ws, include);
    writeFileSync(join(ws, 'README.md'), 'docs are not source here');
    assert.equal(await sourceDigest(ws, include), before);
    writeFileSync(join(ws, 'src/new.txt'), 'source');
    assert.notEqual(await sourceDigest(ws, include), before);
  });

  it('hashes the documented encoding: header, then F/L entries in UTF-8 path order', async (t) => {
    const { ws } = tempRoot(t);
    writeFileSync(join(ws, 'b.txt'), 'bee');
    mkdirSync(join(ws, 'a'));
    writeFileSync(join(ws, 'a/z.txt'), '');
    symlinkSync('b.txt', join(ws, 'link'));
    const expected = createHash('sha256')
      .update('ordivon-source-digest-v1\n')
      .update('F\0a/z.txt\0' + '0\0')
      .update('F\0b.txt\0' + '3\0bee')
      .update('L\0link\0' + '5\0b.txt')
      .digest('hex');
    assert.equal(await sourceDigest(ws), `sha256:${expected}`);
  });
});
