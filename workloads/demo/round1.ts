import { demoConfinement } from '../shared/confinement.js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openHost, type Host } from '../../host/index.js';
import type { TaskRun } from '../../views/index.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { createRuntime } from '../../runtime/index.js';
import { EventStore } from '../../store/index.js';
import { emitReport, type Io } from '../../cli/cli-io.js';
import { columns, failedExpectations, runRows } from './output.js';
import { reportRound1, type Round1Expectation, type Round1Report } from '../round1-v1/checks.js';
import { round1Harnesses, type Round1Run } from '../round1-v1/harnesses.js';
import { continuationText, runContinuation, type ContinuationReport } from '../round1-v1/continuation-run.js';
import { attentionOracleLine, runAttentionOracle, type OracleCount } from '../round1-v1/oracle.js';
import {
  ROUND1_PLANS,
  ROUND1_SCENARIOS,
  copyWorld,
  driveRound1,
  round1BehaviourFor,
  type Round1Facts,
  type Round1Plan,
  type Round1ScenarioName,
} from '../round1-v1/scenarios.js';
import type { AcpAgent } from '../shared/harnesses.js';
import { loadWorkload, type Workload } from '../../cli/workload.js';

/** What `--only` takes: the scenarios, and `continuation` (the six continuation trajectories and the plain-retry baseline). */
export const ROUND1_PARTS = [...ROUND1_SCENARIOS, 'continuation'] as const;
export type Round1Part = (typeof ROUND1_PARTS)[number];

/**
 * `ordivon demo --workload round1`: the Round 1 maintenance world (round1-v1). Each scenario is
 * its own Task on its own copy of the world, all on one Host side by side; every expectation is
 * then read back from the durable state (a read-only store, the Runtime's job records, the world
 * copies), one line per scenario. Then the continuation after loss (round1-v1/continuation.ts): six
 * trajectories across two child processes and the plain-retry baseline, one line each, counted
 * from the ledger's own file. Exit 0 only if every expectation held.
 */
export async function round1Demo(
  options: { state: string; acpAgent: AcpAgent; only: Round1Part[]; fresh: boolean },
  io: Io,
): Promise<number> {
  const { state, acpAgent } = options;
  const only = options.only.filter((p): p is Round1ScenarioName => p !== 'continuation');
  const workload = loadWorkload('round1-v1');
  const say = (text: string) => io.err(text);
  if (options.fresh) rmSync(state, { recursive: true, force: true });
  say(
    `ordivon demo: ${workload.name} on ${state}; scenarios ${only.join(', ')}; Codex is the real codex app-server, the ACP agent is ${acpAgent === 'opencode' ? 'the real opencode acp' : 'the scripted Hermes-like agent'}; models are scripted on loopback`,
  );

  const reports = only.length > 0 ? await runScenarios(state, acpAgent, workload, only, say) : [];
  const continuation = options.only.includes('continuation') ? await runContinuation(state, acpAgent, say) : undefined;
  const attention = runAttentionOracle();
  const failed = [
    ...reports.flatMap((r) => r.expectations),
    ...(continuation?.expectations ?? []),
    attentionExpectation(attention),
  ].filter((e) => !e.held);
  return emitReport(
    io,
    {
      state,
      ok: failed.length === 0,
      failed,
      scenarios: reports,
      ...(continuation ? { continuation } : {}),
      attention,
    },
    () => [round1Text(reports, failed, state, continuation), attentionOracleLine(attention)].join('\n'),
    failedExpectations(failed),
  );
}

/** The scenarios side by side on one Host, each on its own world copy; read back from the durable state. */
async function runScenarios(
  state: string,
  acpAgent: AcpAgent,
  workload: Workload,
  only: Round1ScenarioName[],
  say: (text: string) => void,
): Promise<Round1Report[]> {
  const bound = new Map<string, { plan: Round1Plan; gate: (run: Round1Run) => Promise<void> }>();
  const scripted = round1Harnesses({
    acpAgent,
    behaviourOf: (run) => round1BehaviourFor(bound.get(run.taskId)!.plan, run),
    before: (run) => bound.get(run.taskId)?.gate(run) ?? Promise.resolve(),
  });
  let host: Host | undefined;
  let driven: Array<{ name: Round1ScenarioName; taskId: string; facts: Round1Facts }>;
  try {
    host = await openHost({
      state,
      harnesses: scripted.harnesses,
      confinement: demoConfinement(say),
      onStep: (taskId, text) => say(`  [${bound.get(taskId)?.plan.name ?? taskId.slice(0, 13)}] ${text}`),
    });
    const sup = host.supervisor;
    driven = await Promise.all(
      only.map(async (name) => {
        const plan = ROUND1_PLANS[name];
        const world = copyWorld(workload, state, name);
        const { taskId, facts } = await driveRound1(
          sup,
          workload,
          plan,
          world,
          join(state, 'workspaces'),
          (taskId, gate) => bound.set(taskId, { plan, gate }),
        );
        return { name, taskId, facts };
      }),
    );
  } finally {
    await host?.stop({ jobs: 'stop' });
    await scripted.close();
  }

  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  const runtime = await createRuntime({ root: join(state, 'runtime'), recover: false, confinement: demoConfinement() });
  const reports: Round1Report[] = [];
  try {
    for (const name of ROUND1_SCENARIOS) {
      const d = driven.find((x) => x.name === name);
      if (d) reports.push(await reportRound1(store, runtime, workload, d.name, d.taskId, d.facts));
    }
  } finally {
    await runtime.close();
    await store.close();
  }
  return reports;
}

/** What a run left as evidence: nothing when its result itself was refused (its Context moved). */
function evidenceOf(run: TaskRun): string {
  if (run.refusedAs) return `none (run refused ${run.refusedAs})`;
  return Object.keys(run.evidence).join(', ') || 'none';
}

/** The oracle's verdict as an expectation: the evidence-rich policy (the drivers') gets every case right. */
function attentionExpectation(counts: OracleCount[]) {
  const evidence = counts.find((c) => c.policy === 'evidence-rich');
  return {
    scenario: 'attention-oracle',
    what: 'the evidence-rich policy interrupts exactly the consequential cases, with no stale approval',
    held: evidence !== undefined && evidence.wrong.length === 0,
    observed: evidence ? `wrong: ${evidence.wrong.join(', ') || 'none'}` : 'no evidence-rich policy',
  };
}

/** The human report: one row per provider run, one line per scenario, then the verdict. */
export function round1Text(
  reports: Round1Report[],
  failed: Array<Omit<Round1Expectation, 'scenario'> & { scenario: string }>,
  state: string,
  continuation?: ContinuationReport,
): string {
  const rows = runRows(reports, (run) => [evidenceOf(run), run.finalText]);
  const width = Math.max(...reports.map((r) => r.name.length));
  const inspect = Math.max(width, ...(continuation?.trajectories.map((t) => t.name.length) ?? []));
  const held = reports.reduce((n, r) => n + r.expectations.length, 0) + (continuation?.expectations.length ?? 0);
  const scenarios = reports.length
    ? [
        ...columns(['run', 'harness (provider)', 'stage', 'evidence retained', 'final text'], rows),
        '',
        ...reports.map((r) => `${r.name.padEnd(width)}  ${[`${r.state} g${r.generation}`, ...r.summary].join('; ')}`),
        '',
      ]
    : [];
  return [
    '',
    ...scenarios,
    ...(continuation ? [...continuationText(continuation), ''] : []),
    `Inspect any Task: ordivon show TASK_ID --events --state ${state}`,
    ...[...reports, ...(continuation?.trajectories ?? [])].map((r) => `  ${r.name.padEnd(inspect)}  ${r.taskId}`),
    '',
    failed.length === 0
      ? `all ${held} expectations held`
      : failed.map((f) => `EXPECTATION FAILED: ${f.scenario}: ${f.what} (observed ${f.observed})`).join('\n'),
  ].join('\n');
}
