import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FROZEN_TEST_MAX_BYTES } from '../../drivers/confine.js';
import { createRuntime } from '../../runtime/index.js';
import { HostError, parseTaskSpec, pinFrozenTests } from '../../kernel/index.js';

/** A seed whose frozen test `check.sh` (a shell script that exits 0) is exactly `bytes` long. */
function seedWithTest(t: TestContext, bytes: number): { dir: string; seed: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ordivon-frozen-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const seed = join(dir, 'seed');
  mkdirSync(seed);
  const body = 'exit 0\n';
  writeFileSync(join(seed, 'check.sh'), body + '#'.repeat(bytes - body.length - 1) + '\n');
  return { dir, seed };
}

function specOf(seed: string) {
  return parseTaskSpec({
    title: 'Pin the test',
    goal: 'Nothing to change.',
    workspaceSeed: seed,
    requiredArtifacts: [{ name: 'report.md', kind: 'text' }],
    stages: [{ name: 'fix', produces: ['report.md'], proposesCompletion: true }],
    acceptance: { command: 'sh', args: ['check.sh'], frozenTests: ['check.sh'], timeoutMs: 30_000 },
  });
}

describe('the frozen-test size limit', () => {
  it('refuses at Task creation a frozen test one byte over the limit, naming the field and the refusal', (t) => {
    const { seed } = seedWithTest(t, FROZEN_TEST_MAX_BYTES + 1);
    assert.throws(
      () => pinFrozenTests(specOf(seed)),
      (error: unknown) =>
        error instanceof HostError &&
        error.code === 'invalid_spec' &&
        error.path === 'acceptance.frozenTests' &&
        error.message.includes('artifact_too_large') &&
        error.message.includes(String(FROZEN_TEST_MAX_BYTES)),
    );
  });

  it('pins a frozen test at the limit, and the Runtime verifies it intact with the pinned digest', async (t) => {
    const { dir, seed } = seedWithTest(t, FROZEN_TEST_MAX_BYTES);
    const pinned = pinFrozenTests(specOf(seed)).acceptance!.frozenTestDigests!['check.sh'];
    assert.match(pinned ?? '', /^sha256:/);

    const runtime = await createRuntime({ root: join(dir, 'state'), confinement: 'none' });
    t.after(() => runtime.close());
    const { jobId } = await runtime.verify({
      clientRequestId: 'req-verify-at-limit',
      workspace: seed,
      command: 'sh',
      args: ['check.sh'],
      frozenTests: ['check.sh'],
      timeoutMs: 30_000,
    });
    const verification = (await runtime.observe(jobId)).verification;
    assert.deepEqual(verification?.frozenTestRefusals, {});
    assert.equal(verification?.frozenTestDigests['check.sh'], pinned);
    assert.equal(verification?.passed, true);
  });

  it('is the limit docs/stages.md states', () => {
    const page = readFileSync(fileURLToPath(new URL('../../../docs/stages.md', import.meta.url)), 'utf8');
    assert.ok(
      page.includes(`at most ${FROZEN_TEST_MAX_BYTES.toLocaleString('en-US')} bytes, \`FROZEN_TEST_MAX_BYTES\``),
    );
  });
});
