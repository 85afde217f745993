import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openHost, type Host } from '../actors/host.js';
import type { TaskRun } from '../actors/task-runs.js';
import { OBJECT_KINDS } from '../objects/index.js';
import { createRuntime } from '../runtime/index.js';
import { EventStore } from '../store/index.js';
import { EXIT, emit, type Io } from '../scripts/cli-io.js';
import { columns } from './demo-output.js';
import { reportRound1, type Round1Expectation, type Round1Report } from './round1-checks.js';
import { round1Harnesses, type Round1Run } from './round1-harnesses.js';
import { attentionOracleLine, runAttentionOracle } from './round1-oracle.js';
import {
  ROUND1_PLANS,
  ROUND1_SCENARIOS,
  copyWorld,
  driveRound1,
  round1BehaviourFor,
  type Round1Facts,
  type Round1Plan,
  type Round1ScenarioName,
} from './round1-scenarios.js';
import type { AcpAgent } from './scripted-harnesses.js';
import { loadWorkload } from './workload.js';

/**
 * `ordivon demo --workload round1`: the Round 1 maintenance world (round1-v1). Each scenario is
 * its own Task on its own copy of the world, all on one Host side by side; every expectation is
 * then read back from the durable state (a read-only store, the Runtime's job records, the world
 * copies), one line per scenario. Exit 0 only if every expectation held.
 */
export async function round1Demo(
  options: { state: string; acpAgent: AcpAgent; only: Round1ScenarioName[]; fresh: boolean },
  io: Io,
): Promise<number> {
  const { state, acpAgent, only } = options;
  const workload = loadWorkload('round1-v1');
  const say = (text: string) => io.err(text);
  if (options.fresh) rmSync(state, { recursive: true, force: true });
  say(
    `ordivon demo: ${workload.name} on ${state}; scenarios ${only.join(', ')}; Codex is the real codex app-server, the ACP agent is ${acpAgent === 'opencode' ? 'the real opencode acp' : 'the scripted Hermes-like agent'}; models are scripted on loopback`,
  );

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
  const runtime = await createRuntime({ root: join(state, 'runtime'), recover: false });
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
  const failed = reports.flatMap((r) => r.expectations).filter((e) => !e.held);
  const attention = runAttentionOracle();
  emit(io, { state, ok: failed.length === 0, failed, scenarios: reports, attention }, () =>
    [round1Text(reports, failed, state), attentionOracleLine(attention)].join('\n'),
  );
  return failed.length === 0 ? EXIT.ok : EXIT.failed;
}

/** What a run left as evidence: nothing when its result itself was refused (its Context moved). */
function evidenceOf(run: TaskRun): string {
  if (run.refusedAs) return `none (run refused ${run.refusedAs})`;
  return Object.keys(run.evidence).join(', ') || 'none';
}

/** The human report: one row per provider run, one line per scenario, then the verdict. */
export function round1Text(reports: Round1Report[], failed: Round1Expectation[], state: string): string {
  const rows = reports.flatMap((r) =>
    r.runs.map((run) => [
      `${r.name} g${run.generation}`,
      `${run.harness} (${run.provider})`,
      run.purpose,
      evidenceOf(run),
      run.finalText,
    ]),
  );
  const width = Math.max(...reports.map((r) => r.name.length));
  return [
    '',
    ...columns(['run', 'harness (provider)', 'stage', 'evidence retained', 'final text'], rows),
    '',
    ...reports.map((r) => `${r.name.padEnd(width)}  ${[`${r.state} g${r.generation}`, ...r.summary].join('; ')}`),
    '',
    `Inspect any Task: ordivon show TASK_ID --events --state ${state}`,
    ...reports.map((r) => `  ${r.name.padEnd(width)}  ${r.taskId}`),
    '',
    failed.length === 0
      ? `all ${reports.reduce((n, r) => n + r.expectations.length, 0)} expectations held`
      : failed.map((f) => `EXPECTATION FAILED: ${f.scenario}: ${f.what} (observed ${f.observed})`).join('\n'),
  ].join('\n');
}
