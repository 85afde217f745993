import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isCodedError } from '../../base/index.js';
import { makePrivateDir, type EventStore } from '../../store/index.js';
import { choicesText, readContinuationTask, type Expect, type PhaseReport } from '../shared/continuation-read.js';
import { readContinuationRun, runPhases, type ContinuationRun } from '../shared/continuation-run.js';
import { TRAJECTORIES, maintenanceOf, type Trajectory } from './continuation.js';
import { ledgerAdapter, readLedgerFile, setLedgerFault, startLedger } from './ledger/index.js';

/**
 * The continuation trajectories end to end (continuation.ts): one ledger process, the
 * first process (A loses the answer), the fresh process (B continues), then the plain-retry
 * baseline straight to the ledger; every count is read back from the store and the ledger's own file.
 */

export type { ContinuationExpectation, PhaseReport } from '../shared/continuation-read.js';

export interface TrajectoryReport {
  name: string;
  taskId: string;
  a: string;
  b: string;
  state: string;
  /** The Effect's status at rest. */
  effect: string | null;
  /** Each decision: candidate, generation and `ok` or the refusal code. */
  decisions: Array<[string, number, string]>;
  /** Ledger entries for this trajectory's maintenance, read from the ledger file. */
  entries: number;
}

export interface ContinuationReport extends ContinuationRun<TrajectoryReport> {
  ledgerFile: string;
  baseline: { lost: string; entries: number };
}

const BASELINE = { name: 'plain-retry-baseline' };

/** Runs the six trajectories (two child processes) and the baseline; reads everything back. */
export async function runContinuation(
  state: string,
  acpAgent: string,
  say: (text: string) => void,
): Promise<ContinuationReport> {
  // The ledger lives in the state root, which the phases' Hosts open: made 0700 first, as a Host
  // makes it (a root others may enter, holding a ledger and no format.json, is refused).
  makePrivateDir(state);
  mkdirSync(join(state, 'ledger'), { recursive: true });
  const ledger = await startLedger({ db: join(state, 'ledger', 'maintenance.db') });
  try {
    const { lost, continued } = await runPhases({
      state,
      args: ['--workload', 'round1', '--ledger', ledger.url, '--acp-agent', acpAgent],
      label: 'continuation',
      lose: 'A decides the maintenance; the ledger commits and drops each answer',
      // Each of the six maintenance performs commits, then the answer is dropped.
      dropAnswers: () => setLedgerFault(ledger.url, 'commit-then-drop', TRAJECTORIES.length),
      restore: () => setLedgerFault(ledger.url, 'none'),
      say,
    });
    say('continuation: plain-retry baseline, straight to the ledger');
    const lostAs = await plainRetry(ledger.url);
    return await readContinuation(state, ledger.db, lost, continued, lostAs);
  } finally {
    await ledger.stop();
  }
}

/** The same loss without a Host: the answer is dropped, and the caller retries under a new request id. */
async function plainRetry(url: string): Promise<string> {
  const client = ledgerAdapter(url);
  const maintenance = maintenanceOf(BASELINE);
  await setLedgerFault(url, 'commit-then-drop', 1);
  const lost = await client.perform('plain-retry/1', maintenance).then(
    () => 'answered',
    (error: unknown) => (isCodedError(error) ? error.code : String(error)),
  );
  await client.perform('plain-retry/2', maintenance);
  return lost;
}

/**
 * Reads the trajectories back from the read-only store and the ledger file, and checks each: the
 * two phases' reports are all it takes from the child processes.
 */
export async function readContinuation(
  state: string,
  ledgerFile: string,
  lost: PhaseReport,
  continued: PhaseReport,
  lostAs: string,
): Promise<ContinuationReport> {
  const entries = readLedgerFile(ledgerFile);
  const baseline = entries.filter((e) => e.target === maintenanceOf(BASELINE).target).length;
  const read = (store: EventStore, t: Trajectory, taskId: string, expect: Expect) =>
    readTrajectory(store, t, taskId, entries, expect);
  const run = await readContinuationRun(state, TRAJECTORIES, { lost, continued }, read, (check) =>
    check('plain-retry')(
      'the plain retry lost its first answer and left two ledger entries',
      [lostAs, baseline],
      ['effect_response_lost', 2],
    ),
  );
  return { ledgerFile, ...run, baseline: { lost: lostAs, entries: baseline } };
}

function readTrajectory(
  store: EventStore,
  t: Trajectory,
  taskId: string,
  entries: ReturnType<typeof readLedgerFile>,
  expect: Expect,
): TrajectoryReport {
  const task = readContinuationTask(store, t, taskId, { first: 'maintain', perform: 'record-maintenance' }, expect);
  const { events } = task;
  const mine = entries.filter((e) => e.target === maintenanceOf(t).target);
  const requestId = `${taskId}/a1/g1/effect`;
  expect(
    'one intent, lost, reconciled by lookup: recorded, the Task waits',
    [
      events.filter((e) => e.type === 'effect.intend').length,
      events.filter((e) => e.type === 'effect.lost').length,
      events.filter((e) => e.type === 'effect.reconcile').map((e) => (e.data['receiptDigests'] as unknown[]).length),
      task.state,
      task.effect,
    ],
    [1, 1, [1], 'waiting', { status: 'recorded', requestId }],
  );
  expect(
    'the ledger file holds exactly one entry, under the first request id',
    mine.map((e) => e.requestId),
    [requestId],
  );
  return {
    name: t.name,
    taskId,
    a: t.a,
    b: t.b,
    state: task.state,
    effect: task.effect?.status ?? null,
    decisions: task.decisions,
    entries: mine.length,
  };
}

/** One line per trajectory and the baseline's, as the demo prints them. */
export function continuationText(report: ContinuationReport): string[] {
  const width = Math.max(...report.trajectories.map((t) => t.name.length), 'plain-retry baseline'.length);
  const lines = report.trajectories.map((t) => {
    const chose = choicesText(t.decisions);
    return `${t.name.padEnd(width)}  A ${t.a}: answer lost, Effect unknown (pid ${report.pids.lose}); fresh process B ${t.b} (pid ${report.pids.continue}): ${chose}; Effect ${t.effect ?? 'none'}, Task ${t.state}; ledger entries: ${t.entries}`;
  });
  const one = report.trajectories.filter((t) => t.entries === 1).length;
  return [
    ...lines,
    `${'plain-retry baseline'.padEnd(width)}  answer lost (${report.baseline.lost}), retried under a new request id: ledger entries: ${report.baseline.entries}`,
    `continuation after loss: ${one}/${TRAJECTORIES.length} trajectories with exactly one ledger entry; plain retry: ${report.baseline.entries} (read from ${report.ledgerFile})`,
  ];
}
