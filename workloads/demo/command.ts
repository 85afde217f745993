import { demoConfinement } from '../shared/confinement.js';
import { rmSync } from 'node:fs';
import { z } from 'zod';
import { openHost, type Host } from '../../host/index.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { createRuntime } from '../../runtime/index.js';
import { EventStore, resolveStateRoot } from '../../store/index.js';
import { F3Phases, reportScenario, type ScenarioReport } from './checks.js';
import { crossChecks } from './cross-checks.js';
import {
  PLANS,
  SCENARIOS,
  behaviourFor,
  driveScenario,
  type ScenarioFacts,
  type ScenarioName,
  type ScenarioPlan,
  scenariosOf,
} from './scenarios.js';
import { scriptedHarnesses } from '../shared/harnesses.js';
import { losingResponses } from './lost-response.js';
import { loadWorkload, type Workload } from '../../cli/workload.js';
import { CliError, EXIT, emitReport, type Io } from '../../cli/cli-io.js';
import type { DemoArgs } from './flags.js';
import { demoText, failedExpectations } from './output.js';
import { demoChild } from '../shared/child.js';
import { continuationPhase } from '../round1-v1/continuation.js';
import { ROUND1_PARTS, round1Demo } from './round1.js';

/** An internal flag a continuation phase needs. */
function required(value: string | undefined, flag: string): string {
  if (value === undefined)
    throw new CliError('usage', `${flag}: required with --continuation-phase`, { exit: EXIT.usage, path: flag });
  return value;
}

/** `ordivon demo` (cli.ts defines its flags and what it does). */
export async function runDemo(values: DemoArgs, io: Io): Promise<number> {
  const { 'acp-agent': acpAgent, 'f3-phase': f3Phase, task } = values;
  const state = resolveStateRoot(values.state);
  const phase = values['continuation-phase'];
  if (values.workload === 'world-w1') {
    const { worldW1Demo, w1ContinuationPhase, W1_PARTS } = await import('../world-w1/index.js');
    if (phase)
      return w1ContinuationPhase(phase, { state, acpAgent, providerUrl: required(values.provider, '--provider') }, io);
    const only = values.only === undefined ? undefined : scenariosOf(values.only, W1_PARTS);
    return worldW1Demo({ state, fresh: values.fresh === true, only, acpAgent }, io);
  }
  if (values.workload === 'loop-compare') {
    const { loopCompareDemo, LOOP_COMPARE_PARTS } = await import('../loop-compare/index.js');
    const only = values.only === undefined ? undefined : scenariosOf(values.only, LOOP_COMPARE_PARTS);
    return loopCompareDemo({ state, fresh: values.fresh === true, only }, io);
  }
  if (values.workload === 'branch-join') {
    const { branchJoinDemo, BRANCH_JOIN_PARTS } = await import('../branch-join/index.js');
    const only = values.only === undefined ? undefined : scenariosOf(values.only, BRANCH_JOIN_PARTS);
    return branchJoinDemo({ state, fresh: values.fresh === true, only }, io);
  }
  if (values.workload === 'round1') {
    if (phase) return continuationPhase(phase, { state, acpAgent, ledgerUrl: required(values.ledger, '--ledger') }, io);
    // F3's internal flags belong to the hamilton demo.
    return round1Demo(
      { state, acpAgent, only: scenariosOf(values.only, ROUND1_PARTS), fresh: values.fresh === true },
      io,
    );
  }
  const only = scenariosOf(values.only, SCENARIOS);
  const workload = loadWorkload('hamilton-v1');
  const say = (text: string) => io.err(text);
  const demo: DemoRun = { state, workload, acpAgent, say };
  if (f3Phase === 'lose') return f3Lose(demo, io);
  if (f3Phase === 'reconcile') {
    if (!task)
      throw new CliError('usage', '--task: required with --f3-phase reconcile', { exit: EXIT.usage, path: '--task' });
    return f3Reconcile(demo, task, io);
  }
  if (values.fresh) rmSync(state, { recursive: true, force: true });

  say(
    `ordivon demo: ${workload.name} on ${state}; scenarios ${only.join(', ')}; Codex is the real codex app-server, the ACP agent is ${acpAgent === 'opencode' ? 'the real opencode acp' : 'the scripted Hermes-like agent'}; models are scripted on loopback`,
  );
  const driven: Array<{ name: ScenarioName; taskId: string; facts: ScenarioFacts }> = [];
  const inProcess = only.filter((n) => n !== 'F3');
  if (inProcess.length > 0) {
    // Independent Tasks run side by side on one Host, as a service would run them.
    const results = await withDemoHost(demo, async (host, bind) =>
      Promise.all(
        inProcess.map(async (name) => ({
          name,
          ...(await driveScenario(host.supervisor, workload, PLANS[name], (taskId) => bind(taskId, PLANS[name]))),
        })),
      ),
    );
    driven.push(...results);
  }
  let f3: F3Phases | undefined;
  if (only.includes('F3')) {
    f3 = await runF3(state, acpAgent, say);
    driven.push({ name: 'F3', taskId: f3.lost.taskId, facts: {} });
  }

  const reports = await readBack(state, driven, f3);
  // Expectations that compare scenarios are checked only when all of them ran (`--only` may run a subset).
  const cross = crossChecks(reports);
  const failed = [...reports.flatMap((r) => r.expectations), ...cross.expectations].filter((e) => !e.held);
  return emitReport(
    io,
    { state, ok: failed.length === 0, failed, unchecked: cross.unchecked, scenarios: reports, ...(f3 ? { f3 } : {}) },
    () => demoText(reports, failed, state, cross.unchecked),
    failedExpectations(failed),
  );
}

/** What one demo process runs on: its state root, the workload, the ACP agent, where its progress lines go. */
interface DemoRun {
  state: string;
  workload: Workload;
  acpAgent: 'opencode' | 'hermes-like';
  say: (text: string) => void;
}

/** Opens a Host with the scripted harnesses, whose behaviour follows the scenario each Task is bound to. */
async function withDemoHost<T>(
  { state, workload, acpAgent, say }: DemoRun,
  body: (host: Host, bind: (taskId: string, plan: ScenarioPlan) => void) => Promise<T>,
  options: { dropRepairResponse?: boolean; stopJobs?: 'stop' | 'finish' } = {},
): Promise<T> {
  const bound = new Map<string, ScenarioPlan>();
  const purposes = new Map<string, string>();
  const scripted = scriptedHarnesses({
    workload,
    acpAgent,
    behaviourOf: (a) => {
      purposes.set(a.taskId, a.purpose);
      return behaviourFor(bound.get(a.taskId) ?? PLANS['codex-first'], a);
    },
  });
  let host: Host | undefined;
  try {
    host = await openHost({
      state,
      harnesses: scripted.harnesses,
      confinement: demoConfinement(say),
      onStep: (taskId, text) => say(`  [${bound.get(taskId)?.name ?? taskId.slice(0, 13)}] ${text}`),
      // F3's repair run is dispatched and its response lost: the harness is launched for the
      // Assignment just before its dispatch, so the purpose it was launched for is the dispatch's.
      ...(options.dropRepairResponse
        ? {
            wrapRuntime: (runtime) =>
              losingResponses(runtime, ({ clientRequestId, run }) => {
                const taskId = clientRequestId.split('/')[0]!;
                return run.kind === 'harness' && bound.get(taskId)?.name === 'F3' && purposes.get(taskId) === 'repair';
              }),
          }
        : {}),
    });
    return await body(host, (taskId, plan) => bound.set(taskId, plan));
  } finally {
    await host?.stop({ jobs: options.stopJobs ?? 'stop' });
    await scripted.close();
  }
}

/** Runs F3's two halves as two child processes on the same state root; returns what each reported. */
async function runF3(state: string, acpAgent: string, say: (text: string) => void): Promise<F3Phases> {
  const child = (args: string[]) => demoChild(state, ['--acp-agent', acpAgent, ...args], say);
  say('F3: process 1 commits the repair Assignment, loses the dispatch response and stops');
  const lost = await child(['--f3-phase', 'lose']);
  const taskId = z.object({ taskId: z.string() }).safeParse(lost);
  if (!taskId.success) throw new CliError('demo_failed', `F3 process 1 reported ${JSON.stringify(lost)}`);
  say(`F3: process 2 (fresh) boots on the same state root and reconciles ${taskId.data.taskId}`);
  const reconciled = await child(['--f3-phase', 'reconcile', '--task', taskId.data.taskId]);
  const phases = F3Phases.safeParse({ lost, reconciled });
  if (!phases.success)
    throw new CliError('demo_failed', `F3 processes reported ${JSON.stringify({ lost, reconciled })}`);
  return phases.data;
}

/**
 * F3, process 1: diagnose, then commit the repair Assignment; the Runtime's response to its
 * dispatch is dropped, so the Task records `dispatch.lost` (unknown). At that commit this process
 * stops its supervisor before any reconciliation (the listener runs before the next frontier
 * step is scheduled), lets the Runtime finish the job it owns, and exits.
 */
async function f3Lose(demo: DemoRun, io: Io): Promise<number> {
  const { state, workload } = demo;
  const plan = PLANS.F3;
  const taskId = await withDemoHost(
    demo,
    async (host, bind) => {
      const sup = host.supervisor;
      const { taskId } = await sup.createTask({
        ...workload.spec,
        labels: { ...workload.spec.labels, scenario: plan.name },
      });
      bind(taskId, plan);
      await sup.send(taskId, { type: 'assignment.commit', harness: plan.diagnoser, stage: 'diagnose' });
      await sup.waitFor(taskId, ['waiting']);
      const stopped = new Promise<void>((resolve, reject) => {
        const unsubscribe = sup.subscribe((c) => {
          if (c.taskId !== taskId || c.state !== 'assigned.unknown') return;
          unsubscribe();
          io.err(`  [F3] dispatch unknown at revision ${c.revision}: stopping this process's supervisor now`);
          sup.stop().then(resolve, reject);
        });
      });
      await sup.send(taskId, { type: 'assignment.commit', harness: plan.repairer, stage: 'repair' });
      const ranThrough = sup.waitFor(taskId, ['completed', 'waiting']).then(
        () =>
          Promise.reject(
            new CliError('demo_failed', 'F3: the repair ran to its end in process 1; the response was not lost'),
          ),
        () => new Promise<never>(() => undefined), // rejected because the supervisor stopped: `stopped` decides
      );
      await Promise.race([stopped, ranThrough]);
      return taskId;
    },
    { dropRepairResponse: true, stopJobs: 'finish' },
  );
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  try {
    const head = store.head(taskId)!;
    const last = store.event(taskId, head.revision)!;
    io.out(
      JSON.stringify({
        pid: process.pid,
        taskId,
        lastEvent: last.type,
        revision: head.revision,
        state: store.projection(taskId)?.state ?? '?',
      }),
    );
  } finally {
    await store.close();
  }
  return EXIT.ok;
}

/** F3, process 2: a fresh Host boots (reconciling unknown dispatches before serving) and the Task runs to rest. */
async function f3Reconcile(demo: DemoRun, taskId: string, io: Io): Promise<number> {
  const rest = await withDemoHost(demo, async (host, bind) => {
    bind(taskId, PLANS.F3);
    return host.supervisor.waitFor(taskId, ['completed', 'waiting']);
  });
  io.out(JSON.stringify({ pid: process.pid, taskId, state: rest }));
  return EXIT.ok;
}

/** Reads every driven Task back from the durable state (read-only store, Runtime job records) and checks it. */
async function readBack(
  state: string,
  driven: Array<{ name: ScenarioName; taskId: string; facts: ScenarioFacts }>,
  f3: F3Phases | undefined,
): Promise<ScenarioReport[]> {
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  const runtime = await createRuntime({ root: `${state}/runtime`, recover: false, confinement: demoConfinement() });
  try {
    const order = (n: ScenarioName) => SCENARIOS.indexOf(n);
    const sorted = [...driven].sort((a, b) => order(a.name) - order(b.name));
    const reports: ScenarioReport[] = [];
    for (const d of sorted)
      reports.push(await reportScenario(store, runtime, d.name, d.taskId, d.facts, d.name === 'F3' ? f3 : undefined));
    return reports;
  } finally {
    await runtime.close();
    await store.close();
  }
}
