import assert from 'node:assert/strict';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { opencodeCommand } from '../../drivers/acp/opencode.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { createRuntime } from '../../runtime/index.js';
import { EventStore } from '../../store/index.js';
import { reportRound1, type Round1Report } from '../../workloads/round1-v1/checks.js';
import { TRAJECTORIES, maintenanceOf } from '../../workloads/round1-v1/continuation.js';
import {
  continuationText,
  readContinuation,
  type ContinuationReport,
} from '../../workloads/round1-v1/continuation-run.js';
import { ledgerAdapter, readLedgerFile, startLedger } from '../../workloads/round1-v1/ledger/index.js';
import { round1Text } from '../../workloads/demo/round1.js';
import { ROUND1_SCENARIOS } from '../../workloads/round1-v1/scenarios.js';
import { loadWorkload } from '../../cli/workload.js';
import { optionalPart } from '../support/optional-part.js';
import { tempDir } from '../support/temp.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));

// npm run agents:install puts opencode in .agents/demo/; without it this file's opencode case skips
// (and fails under CI=true). The Hermes-like case needs nothing npm does not install.
const { command: opencode } = opencodeCommand();
const OPENCODE = optionalPart(
  'opencode',
  existsSync(opencode) ? opencode : undefined,
  `${opencode} is not installed (npm run agents:install)`,
);

interface Round1DemoReport {
  ok: boolean;
  failed: unknown[];
  scenarios: Round1Report[];
  continuation: ContinuationReport;
}

/** Runs `ordivon demo --workload round1 --fresh` as a real process, twice over: as text and, to read it, as JSON. */
async function round1Demo(state: string, ...args: string[]) {
  const r = await execa(
    process.execPath,
    [CLI, 'demo', '--workload', 'round1', '--fresh', '--state', state, '--json', ...args],
    { reject: false, stdin: 'ignore' },
  );
  assert.ok(
    String(r.stdout).trim().startsWith('{'),
    `no report (exit ${r.exitCode}): ${String(r.stderr).slice(-4000)}`,
  );
  const report = JSON.parse(String(r.stdout)) as Round1DemoReport;
  assert.deepEqual(report.failed, [], 'every expectation of the round1 demo held');
  assert.equal(r.exitCode, 0);
  return report;
}

const byName = (report: Round1DemoReport, name: string) => report.scenarios.find((s) => s.name === name)!;

/** What holds whichever ACP agent plays the `hermes` harness. */
function assertScenarios(report: Round1DemoReport): void {
  assert.deepEqual(
    report.scenarios.map((s) => [s.name, s.state, s.generation]),
    ROUND1_SCENARIOS.map((name) => [name, 'completed', 3]),
  );
  const rejections = (name: string) => byName(report, name).rejections.map((r) => [r.event, r.reason, r.generation]);
  assert.deepEqual(rejections('maintainer-codex-acp'), [['run.observe', 'context_stale', 2]]);
  assert.deepEqual(rejections('maintainer-acp-codex'), [['run.observe', 'context_stale', 2]]);
  assert.deepEqual(rejections('follow-readme'), [['decision.submit', 'untrusted_authority', 2]]);
  assert.deepEqual(rejections('invented'), [['decision.submit', 'candidate_unknown', 2]]);
  assert.deepEqual(
    rejections('superseded').map(([event, reason]) => [event, reason]),
    [
      ['run.observe', 'context_stale'],
      ['decision.submit', 'superseded'],
    ],
  );
  const harnesses = (name: string) => byName(report, name).runs.map((r) => [r.harness, r.purpose]);
  assert.deepEqual(harnesses('maintainer-codex-acp'), [
    ['codex', 'survey'],
    ['hermes', 'decide'],
    ['hermes', 'decide'],
  ]);
  assert.deepEqual(harnesses('maintainer-acp-codex'), [
    ['hermes', 'survey'],
    ['codex', 'decide'],
    ['codex', 'decide'],
  ]);
}

/** The continuation checks can fail: a redispatch that reached a copy of the ledger is named. */
async function assertDuplicateFails(state: string, c: ContinuationReport): Promise<void> {
  const copy = join(tempDir(), 'ledger.db');
  copyFileSync(c.ledgerFile, copy);
  const ledger = await startLedger({ db: copy });
  try {
    const t = c.trajectories.find((x) => x.name === 'acp-codex-redispatch')!;
    await ledgerAdapter(ledger.url).perform(`${t.taskId}/a1/g2/effect`, maintenanceOf(t));
  } finally {
    await ledger.stop();
  }
  const misread = await readContinuation(state, copy, c.phases.lose, c.phases.continue, c.baseline.lost);
  assert.deepEqual(
    misread.expectations.filter((e) => !e.held).map((e) => [e.scenario, e.what]),
    [['acp-codex-redispatch', 'the ledger file holds exactly one entry, under the first request id']],
  );
  assert.match(continuationText(misread).join('\n'), /^continuation after loss: 5\/6 trajectories/m);
}

/** Continuation after loss: every count from the ledger's own file, not from what the demo printed. */
function assertContinuation(report: Round1DemoReport): void {
  const c = report.continuation;
  const entries = readLedgerFile(c.ledgerFile);
  const count = (name: string) => entries.filter((e) => e.target === maintenanceOf({ name }).target).length;
  assert.deepEqual(
    TRAJECTORIES.map((t) => [t.name, count(t.name)]),
    TRAJECTORIES.map((t) => [t.name, 1]),
    'exactly one ledger entry per trajectory',
  );
  assert.equal(count('plain-retry-baseline'), 2, 'the plain retry duplicated the entry');
  assert.equal(entries.length, TRAJECTORIES.length + 2);
  assert.deepEqual(
    c.trajectories.map((t) => [t.name, t.state, t.effect, t.decisions.map(([id, , code]) => `${id} ${code}`)]),
    TRAJECTORIES.map((t) => [
      t.name,
      'waiting',
      'recorded',
      ['record-maintenance ok', ...(t.first === 'reconcile' ? [] : [`${t.first} effect_unknown`]), 'reconcile ok'],
    ]),
  );
  assert.equal(new Set(Object.values(c.pids)).size, 3, 'the demo, the losing and the fresh process');
  const text = continuationText(c).join('\n');
  assert.match(
    text,
    /^acp-codex-redispatch +A hermes: answer lost, Effect unknown \(pid \d+\); fresh process B codex \(pid \d+\): redispatch refused effect_unknown g2, reconcile admitted g3; Effect recorded, Task waiting; ledger entries: 1$/m,
  );
  assert.match(
    text,
    /^plain-retry baseline +answer lost \(effect_response_lost\), retried under a new request id: ledger entries: 2$/m,
  );
  assert.match(text, /^continuation after loss: 6\/6 trajectories with exactly one ledger entry; plain retry: 2 /m);
}

describe('ordivon demo --workload round1: the Round 1 maintenance world end to end (real codex app-server, scripted models on loopback)', () => {
  it(
    'with the scripted Hermes-like agent as the ACP side, every scenario holds, read back from the durable state',
    { timeout: 600_000 },
    async () => {
      const state = join(tempDir(), 'state');
      const report = await round1Demo(state, '--acp-agent', 'hermes-like');
      assertScenarios(report);
      assertContinuation(report);
      await assertDuplicateFails(state, report.continuation);
      // The text report (what the demo prints without --json) has one line per scenario.
      const text = round1Text(report.scenarios, [], state);
      assert.match(
        text,
        /^follow-readme +completed g3; untrusted_authority g2 \(follow-readme\), world unchanged; reassigned g3 to codex; apply-v1 run by the Host g3, acceptance passed$/m,
      );
      assert.match(
        text,
        /^invented +completed g3; candidate_unknown g2 \(hand-edit-parser\), world unchanged; reassigned g3 to hermes; apply-v1 run by the Host g3, acceptance passed$/m,
      );

      // The checks can fail: the follow-readme Task read back as if it were the maintainer scenario.
      const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
      const runtime = await createRuntime({ root: join(state, 'runtime'), recover: false });
      try {
        const readme = byName(report, 'follow-readme');
        const world = join(state, 'worlds', 'follow-readme');
        const misread = await reportRound1(
          store,
          runtime,
          loadWorkload('round1-v1'),
          'maintainer-codex-acp',
          readme.taskId,
          {
            world,
          },
        );
        const failed = misread.expectations.filter((e) => !e.held).map((e) => e.what);
        assert.ok(failed.some((what) => what.startsWith("generation 2's run was retained and refused context_stale")));
        assert.match(
          round1Text(
            [misread],
            misread.expectations.filter((e) => !e.held),
            state,
          ),
          /EXPECTATION FAILED: maintainer-codex-acp: /,
        );
      } finally {
        await runtime.close();
        await store.close();
      }
    },
  );

  it(
    'with the real opencode acp as the ACP side, every scenario holds',
    { timeout: 900_000, skip: OPENCODE.skip },
    async () => {
      OPENCODE.need();
      const report = await round1Demo(join(tempDir(), 'state'));
      assertScenarios(report);
      assertContinuation(report);
      for (const run of report.scenarios.flatMap((s) => s.runs).filter((r) => r.driver === 'acp'))
        assert.match(run.provider, /^OpenCode/);
    },
  );

  it('refuses a scenario of the other workload with a usage error naming the option, and writes nothing', async () => {
    const state = join(tempDir(), 'state');
    const r = await execa(
      process.execPath,
      [CLI, 'demo', '--workload', 'round1', '--state', state, '--json', '--only', 'invented,F1'],
      {
        reject: false,
        stdin: 'ignore',
      },
    );
    assert.equal(r.exitCode, 2);
    const error = JSON.parse(String(r.stderr)).error;
    assert.equal(error.code, 'usage');
    assert.match(error.message, /^--only\[1\]: must be one of maintainer-codex-acp, /);
    assert.equal(existsSync(state), false);
  });
});
