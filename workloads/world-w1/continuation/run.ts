import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type EventStore } from '../../../store/index.js';
import type { AcpAgent } from '../../shared/harnesses.js';
import { readProviderRecords, setProviderFaults, startProvider, type ProviderRecord } from '../provider/index.js';
import { choicesText, readContinuationTask, type Expect, type PhaseReport } from '../../shared/continuation-read.js';
import { readContinuationRun, runPhases, type ContinuationRun } from '../../shared/continuation-run.js';
import { W1_CONTINUATION, continuationEffect, type W1ContinuationTrajectory } from './phase.js';

/**
 * The W1 continuation end to end (phase.ts): one provider process of its own, the first process
 * (A decides, each answer is dropped), the fresh process (B continues); every count read back
 * from the read-only store and the provider's records file.
 */

export interface W1ContinuationRow {
  name: string;
  taskId: string;
  operation: string;
  a: string;
  b: string;
  state: string;
  effect: string | null;
  /** Each decision: candidate, generation and `ok` or the refusal code. */
  decisions: Array<[string, number, string]>;
  /** Performs the provider's records hold under the trajectory's reference. */
  performs: number;
  /** Operator DecisionRequests opened. */
  operatorRequests: number;
}

export interface W1ContinuationReport extends ContinuationRun<W1ContinuationRow> {
  records: string;
}

/** Runs the trajectories in two child processes against a provider of their own; reads everything back. */
export async function runW1Continuation(
  state: string,
  acpAgent: AcpAgent,
  say: (line: string) => void,
): Promise<W1ContinuationReport> {
  const dir = join(state, 'provider-continuation');
  const hostState = join(state, 'continuation');
  mkdirSync(dir, { recursive: true });
  const provider = await startProvider({ dir, identity: 'w1-provider-key' });
  try {
    // Every perform of the first process commits, and its answer is dropped.
    const operations = [...new Set(W1_CONTINUATION.map((t) => t.operation))];
    const { lost, continued } = await runPhases({
      state: hostState,
      args: ['--workload', 'world-w1', '--provider', provider.url, '--acp-agent', acpAgent],
      label: 'continuation',
      lose: 'A decides perform; the provider commits and drops each answer',
      dropAnswers: () => setProviderFaults(provider.url, { drop: { operations, times: W1_CONTINUATION.length } }),
      restore: () => setProviderFaults(provider.url, { drop: null }),
      say: (line) => say(`  ${line}`),
    });
    return readW1Continuation(hostState, dir, lost, continued);
  } finally {
    await provider.stop();
  }
}

/** Reads the trajectories back from the read-only store and the provider's records, and checks each. */
export async function readW1Continuation(
  state: string,
  providerDir: string,
  lost: PhaseReport,
  continued: PhaseReport,
): Promise<W1ContinuationReport> {
  const records = readProviderRecords(providerDir);
  const read = (store: EventStore, t: W1ContinuationTrajectory, taskId: string, expect: Expect) =>
    readTrajectory(store, t, taskId, records, expect);
  return { records: providerDir, ...(await readContinuationRun(state, W1_CONTINUATION, { lost, continued }, read)) };
}

/** What the lookup B's reconcile asks for can say, by provider shape. */
const LOOKUP = {
  orders: { receipts: 1, unanswerable: undefined, state: 'waiting', effect: 'recorded', operator: 0 },
  transfers: { receipts: 0, unanswerable: 'declined', state: 'effect_unknown.held', effect: 'unknown', operator: 1 },
  // The HTTP adapter has a lookup; for messages it declines (the operation has none).
  messages: { receipts: 0, unanswerable: 'declined', state: 'effect_unknown.held', effect: 'unknown', operator: 1 },
} as const;

function readTrajectory(
  store: EventStore,
  t: W1ContinuationTrajectory,
  taskId: string,
  records: readonly ProviderRecord[],
  expect: Expect,
): W1ContinuationRow {
  const task = readContinuationTask(store, t, taskId, { first: 'act', perform: 'perform' }, expect);
  const { events } = task;
  const mine = records.filter((r) => r.reference === continuationEffect(t).reference);
  const lookup = LOOKUP[t.operation];
  expect(
    `one intent, lost, looked up: ${lookup.effect === 'recorded' ? 'a receipt recorded' : `the provider cannot say (${lookup.unanswerable}), an operator asked`}`,
    [
      events.filter((e) => e.type === 'effect.intend' && e.disposition.admitted).length,
      events.filter((e) => e.type === 'effect.lost').length,
      events
        .filter((e) => e.type === 'effect.reconcile')
        .map((e) => [(e.data['receiptDigests'] as unknown[]).length, e.data['unanswerable'] ?? null]),
      task.state,
      task.effect?.status ?? null,
      task.operatorRequests,
    ],
    [1, 1, [[lookup.receipts, lookup.unanswerable ?? null]], lookup.state, lookup.effect, lookup.operator],
  );
  expect("the provider's records hold exactly one perform under the trajectory's reference", mine.length, 1);
  return {
    name: t.name,
    taskId,
    operation: t.operation,
    a: t.a,
    b: t.b,
    state: task.state,
    effect: task.effect?.status ?? null,
    decisions: task.decisions,
    performs: mine.length,
    operatorRequests: task.operatorRequests,
  };
}

/** One line per trajectory and a summary, as the demo prints them. */
export function w1ContinuationText(report: W1ContinuationReport): string[] {
  const width = Math.max(...report.trajectories.map((t) => t.name.length));
  const lines = report.trajectories.map((t) => {
    const chose = choicesText(t.decisions);
    const end = t.operatorRequests > 0 ? 'an operator asked' : `Effect ${t.effect ?? 'none'}`;
    return `${t.name.padEnd(width)}  A ${t.a}: answer lost (pid ${report.pids.lose}); fresh process B ${t.b} (pid ${report.pids.continue}): ${chose}; ${end}, Task ${t.state}; performs: ${t.performs}`;
  });
  const once = report.trajectories.filter((t) => t.performs === 1).length;
  return [
    ...lines,
    `replacement after loss: ${once}/${W1_CONTINUATION.length} trajectories performed exactly once (read from ${report.records})`,
  ];
}
