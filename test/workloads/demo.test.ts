import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OBJECT_KINDS } from '../../actors/object-kinds.js';
import { EventStore } from '../../store/index.js';
import { tempDir } from '../support/temp.js';

const CLI = fileURLToPath(new URL('../../scripts/ordivon.js', import.meta.url));

interface Report {
  taskId: string;
  state: string;
  generation: number;
  outcome: { digest: string; revision: number } | null;
  verification: { passed: boolean; sourceDigest: string; digest: string } | null;
  evidence: Record<string, { digest: string; generation: number }>;
  rejections: Array<{ reason: string; generation: number; event: string }>;
  receipts: Array<{ generation: number; driver: string; provider: string; session?: string; turn?: string; stopReason: string; finalText: string | null; usage: unknown; counts: Record<string, number>; evidence: string[] }>;
}

/** Runs `ordivon demo --json` as a real process (what `npm start` runs) and returns its report. */
function demo(state: string, ...args: string[]): { status: number | null; report: Report } {
  const r = spawnSync(process.execPath, [CLI, 'demo', '--state', state, '--json', ...args], { encoding: 'utf8', timeout: 300_000 });
  assert.ok(r.stdout.trim().startsWith('{'), `demo printed no report (exit ${r.status}): ${r.stderr.slice(-2000)}`);
  return { status: r.status, report: JSON.parse(r.stdout) };
}

/** Checks the outcome binds the diagnosis, the completion, the Host's source digest and a passed verification. */
async function assertOutcome(state: string, report: Report): Promise<void> {
  assert.equal(report.state, 'completed');
  assert.ok(report.outcome);
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  try {
    const outcome = store.getObject<{ evidence: Record<string, string>; sourceDigest: string; verification: string; generation: number }>(report.outcome.digest, 'outcome').body;
    assert.deepEqual(outcome.evidence, { 'completion.json': report.evidence['completion.json']!.digest, 'diagnosis.json': report.evidence['diagnosis.json']!.digest });
    const verification = store.getObject<{ passed: boolean; sourceDigest: string; frozenTestsIntact: boolean }>(outcome.verification, 'verification').body;
    assert.deepEqual([verification.passed, verification.frozenTestsIntact, verification.sourceDigest], [true, true, outcome.sourceDigest]);
    assert.equal(outcome.sourceDigest, report.verification?.sourceDigest);
  } finally {
    await store.close();
  }
}

describe('the frozen hamilton-v1 workload, end to end (real codex app-server, real opencode acp, scripted models on loopback)', () => {
  it('Codex diagnoses, opencode repairs over ACP: one Task, two generations, verified outcome', async () => {
    const state = join(tempDir(), 'state');
    const { status, report } = demo(state);
    assert.equal(status, 0);
    await assertOutcome(state, report);
    assert.equal(report.generation, 2);
    assert.deepEqual(report.receipts.map((r) => [r.generation, r.driver, r.stopReason]), [[1, 'codex', 'completed'], [2, 'acp', 'end_turn']]);
    const [codex, opencode] = report.receipts;
    assert.match(codex!.provider, /^codex /);
    assert.ok(codex!.session && codex!.turn && codex!.usage, 'codex receipt has thread id, turn id and usage');
    assert.ok(codex!.finalText?.includes('diagnosed'), 'Codex answers with a structured final message');
    assert.match(opencode!.provider, /^OpenCode/);
    assert.ok(opencode!.session?.startsWith('ses_'));
    assert.deepEqual([report.evidence['diagnosis.json']!.generation, report.evidence['completion.json']!.generation], [1, 2]);
    assert.deepEqual(report.rejections, []);
  });

  it('Hermes-like diagnoses, Codex repairs; F1 stale proposal retained and F3 lost response reconciled by clientRequestId', async () => {
    const state = join(tempDir(), 'state');
    const { status, report } = demo(state, '--order', 'hermes-first', '--acp-agent', 'hermes-like', '--fault', 'F1', '--fault', 'F3');
    assert.equal(status, 0);
    await assertOutcome(state, report);
    assert.deepEqual(report.rejections.map((r) => [r.event, r.reason, r.generation]), [['completion.propose', 'stale_assignment', 1]]);
    const [hermes] = report.receipts;
    assert.deepEqual([hermes!.driver, hermes!.finalText, hermes!.counts['toolItemsStarted']! - hermes!.counts['toolItemsCompleted']!], ['acp', null, 1]);
    assert.ok(hermes!.counts['thoughts']! > 0);
    const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
    try {
      const types = [...store.stream(report.taskId)].map(({ event }) => event.type);
      // F3: the repair dispatch's response was dropped: unknown, then found by its exact clientRequestId, exactly one job
      const repairIntent = types.lastIndexOf('dispatch.intend');
      assert.deepEqual(types.slice(repairIntent, repairIntent + 4), ['dispatch.intend', 'dispatch.lost', 'dispatch.reconcile', 'run.observe']);
      const reconcile = [...store.stream(report.taskId)].find(({ event }) => event.type === 'dispatch.reconcile')!.event;
      assert.equal((reconcile.data.jobIds as string[]).length, 1);
      // F1: the stale proposal changed nothing and started no verification
      const verifies = types.filter((t) => t === 'verification.record');
      assert.equal(verifies.length, 1);
    } finally {
      await store.close();
    }
  });

  it('F2: a repair that exits 0 without completion.json is rejected missing_artifact and a later Assignment completes the Task', async () => {
    const state = join(tempDir(), 'state');
    const { status, report } = demo(state, '--acp-agent', 'hermes-like', '--fault', 'F2');
    assert.equal(status, 0);
    await assertOutcome(state, report);
    assert.equal(report.generation, 3);
    assert.deepEqual(report.rejections.map((r) => [r.reason, r.generation]), [['missing_artifact', 2]]);
    assert.deepEqual(report.receipts.map((r) => [r.generation, r.evidence]), [[1, ['diagnosis.json']], [2, []], [3, ['completion.json']]]);
  });
});
