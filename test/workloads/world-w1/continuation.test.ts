import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { providerEffectAdapter, startProvider } from '../../../workloads/world-w1/provider/index.js';
import { continuationEffect, W1_CONTINUATION } from '../../../workloads/world-w1/continuation/phase.js';
import {
  readW1Continuation,
  w1ContinuationText,
  type W1ContinuationReport,
} from '../../../workloads/world-w1/continuation/run.js';
import { tempDir } from '../../support/temp.js';

const CLI = fileURLToPath(new URL('../../../cli/ordivon.js', import.meta.url));

// The ACP side is the scripted Hermes-like agent (official ACP SDK): the continuation code is the
// one round1's continuation runs, which test/workloads/round1-demo.test.ts also runs on the real
// opencode acp. Codex is the real codex app-server.

/** `ordivon demo --workload world-w1 --only continuation --fresh --json` as a real process. */
async function continuation(state: string, ...args: string[]): Promise<W1ContinuationReport> {
  const r = await execa(
    process.execPath,
    [CLI, 'demo', '--workload', 'world-w1', '--only', 'continuation', '--fresh', '--state', state, '--json', ...args],
    { reject: false, stdin: 'ignore' },
  );
  assert.ok(
    String(r.stdout).trim().startsWith('{'),
    `no report (exit ${r.exitCode}): ${String(r.stderr).slice(-4000)}`,
  );
  const report = JSON.parse(String(r.stdout)) as {
    failed: string[];
    rows: unknown[];
    continuation: W1ContinuationReport;
  };
  assert.deepEqual(report.failed, [], 'every expectation of the continuation held');
  assert.equal(r.exitCode, 0);
  assert.deepEqual(report.rows, [], 'only the continuation ran');
  return report.continuation;
}

/** What each trajectory ended in, read back by the demo from the store and the provider's records. */
function assertTrajectories(report: W1ContinuationReport) {
  assert.equal(new Set(Object.values(report.pids)).size, 3, 'the demo and two distinct Host processes');
  assert.deepEqual(
    report.trajectories.map(
      (t) => `${t.name} ${t.a}>${t.b} ${t.state} ${t.effect} performs=${t.performs} operator=${t.operatorRequests}`,
    ),
    [
      'codex-acp-orders-reconcile codex>hermes waiting recorded performs=1 operator=0',
      'codex-acp-transfers-redispatch codex>hermes effect_unknown.held unknown performs=1 operator=1',
      'codex-acp-messages-classify-failed codex>hermes effect_unknown.held unknown performs=1 operator=1',
      'acp-codex-orders-reconcile hermes>codex waiting recorded performs=1 operator=0',
      'acp-codex-transfers-redispatch hermes>codex effect_unknown.held unknown performs=1 operator=1',
      'acp-codex-messages-classify-failed hermes>codex effect_unknown.held unknown performs=1 operator=1',
    ],
  );
  for (const t of report.trajectories.filter((t) => t.name.endsWith('-redispatch')))
    assert.deepEqual(t.decisions, [
      ['perform', 1, 'ok'],
      ['redispatch', 2, 'effect_unknown'],
      ['reconcile', 3, 'ok'],
    ]);
  assert.match(
    w1ContinuationText(report).join('\n'),
    /^replacement after loss: 6\/6 trajectories performed exactly once /m,
  );
}

describe('ordivon demo --workload world-w1: replacement after loss with real agents (real codex app-server, scripted models on loopback)', () => {
  it(
    'with the scripted Hermes-like ACP agent: both orders, each provider shape, every Effect performed once',
    { timeout: 300_000 },
    async () => {
      const state = join(tempDir('ordivon-w1-cont-'), 'state');
      const report = await continuation(state, '--acp-agent', 'hermes-like');
      assertTrajectories(report);

      // The checks can fail: a blind re-send of one order, straight to the provider, is a second perform.
      const dir = join(state, 'provider-continuation');
      const provider = await startProvider({ dir, identity: 'w1-provider-key' });
      const t = W1_CONTINUATION[0]!;
      const effect = continuationEffect(t);
      try {
        const adapter = providerEffectAdapter({ url: provider.url, idFile: join(state, 'ids.jsonl') });
        await adapter.perform('blind-resend', { reference: effect.reference, amount: 1 }, effect);
      } finally {
        await provider.stop();
      }
      const reread = await readW1Continuation(
        join(state, 'continuation'),
        dir,
        report.phases.lose,
        report.phases.continue,
      );
      assert.deepEqual(
        reread.expectations.filter((e) => !e.held).map((e) => [e.scenario, e.observed]),
        [[t.name, '2']],
      );
      assert.match(w1ContinuationText(reread).join('\n'), /^replacement after loss: 5\/6 trajectories /m);
    },
  );

  it('refuses a continuation phase without --provider as a usage error naming it', async () => {
    const state = join(tempDir('ordivon-w1-cont-'), 'state');
    const r = await execa(
      process.execPath,
      [CLI, 'demo', '--workload', 'world-w1', '--continuation-phase', 'lose', '--state', state, '--json'],
      { reject: false, stdin: 'ignore' },
    );
    assert.equal(r.exitCode, 2);
    const error = JSON.parse(String(r.stderr).trim().split('\n')[0]!) as { error: { code: string; path: string } };
    assert.deepEqual([error.error.code, error.error.path], ['usage', '--provider']);
    assert.equal(existsSync(state), false);
  });
});
