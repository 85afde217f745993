import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { taskRuns } from '../../views/index.js';
import { isCodedError } from '../../base/index.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { EventStore } from '../../store/index.js';
import { demoChild } from '../shared/child.js';
import { TRAJECTORIES, maintenanceOf, type Trajectory } from './continuation.js';
import { ledgerAdapter, readLedgerFile, setLedgerFault, startLedger } from './ledger/index.js';

/**
 * The continuation trajectories end to end (continuation.ts): one ledger process, the
 * first process (A loses the answer), the fresh process (B continues), then the plain-retry
 * baseline straight to the ledger; every count is read back from the store and the ledger's own file.
 */

const PhaseReport = z.object({
  pid: z.number().int(),
  tasks: z.array(z.object({ name: z.string(), taskId: z.string(), state: z.string(), effect: z.string().nullable() })),
});
export type PhaseReport = z.infer<typeof PhaseReport>;

export interface ContinuationExpectation {
  scenario: string;
  what: string;
  held: boolean;
  observed: string;
}

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

export interface ContinuationReport {
  ledgerFile: string;
  pids: { demo: number; lose: number; continue: number };
  /** What the two child processes reported. */
  phases: { lose: PhaseReport; continue: PhaseReport };
  trajectories: TrajectoryReport[];
  baseline: { lost: string; entries: number };
  expectations: ContinuationExpectation[];
}

const BASELINE = { name: 'plain-retry-baseline' };

function parsed(report: unknown, phase: string): PhaseReport {
  const result = PhaseReport.safeParse(report);
  if (!result.success) throw new Error(`continuation ${phase} reported ${JSON.stringify(report)}`);
  return result.data;
}

/** Runs the six trajectories (two child processes) and the baseline; reads everything back. */
export async function runContinuation(
  state: string,
  acpAgent: string,
  say: (text: string) => void,
): Promise<ContinuationReport> {
  mkdirSync(join(state, 'ledger'), { recursive: true });
  const ledger = await startLedger({ db: join(state, 'ledger', 'maintenance.db') });
  try {
    const child = (phase: string) =>
      demoChild(
        state,
        ['--workload', 'round1', '--continuation-phase', phase, '--ledger', ledger.url, '--acp-agent', acpAgent],
        say,
      );
    // Each of the six maintenance performs commits, then the answer is dropped.
    await setLedgerFault(ledger.url, 'commit-then-drop', TRAJECTORIES.length);
    say(`continuation: process 1 (A decides the maintenance; the ledger commits and drops each answer)`);
    const lost = parsed(await child('lose'), 'lose');
    await setLedgerFault(ledger.url, 'none');
    say(`continuation: process 2 (fresh; B continues with no transcript)`);
    const continued = parsed(await child('continue'), 'continue');
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
  const expectations: ContinuationExpectation[] = [];
  const expect = (scenario: string, what: string, observed: unknown, expected: unknown) =>
    expectations.push({
      scenario,
      what,
      held: JSON.stringify(observed) === JSON.stringify(expected),
      observed: JSON.stringify(observed),
    });
  const pids = { demo: process.pid, lose: lost.pid, continue: continued.pid };
  expect(
    'continuation',
    'three distinct processes: the demo, the one that lost the answer, the fresh one',
    new Set(Object.values(pids)).size,
    3,
  );
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  const trajectories: TrajectoryReport[] = [];
  try {
    for (const t of TRAJECTORIES) {
      const first = lost.tasks.find((x) => x.name === t.name);
      expect(
        t.name,
        'process 1 left the Task waiting with its Effect unknown',
        [first?.state, first?.effect],
        ['waiting', 'unknown'],
      );
      if (!first) continue;
      trajectories.push(readTrajectory(store, t, first.taskId, entries, (what, o, e) => expect(t.name, what, o, e)));
    }
  } finally {
    await store.close();
  }
  const baseline = entries.filter((e) => e.target === maintenanceOf(BASELINE).target).length;
  expect(
    'plain-retry',
    'the plain retry lost its first answer and left two ledger entries',
    [lostAs, baseline],
    ['effect_response_lost', 2],
  );
  return {
    ledgerFile,
    pids,
    phases: { lose: lost, continue: continued },
    trajectories,
    baseline: { lost: lostAs, entries: baseline },
    expectations,
  };
}

type Expect = (what: string, observed: unknown, expected: unknown) => void;

function readTrajectory(
  store: EventStore,
  t: Trajectory,
  taskId: string,
  entries: ReturnType<typeof readLedgerFile>,
  expect: Expect,
): TrajectoryReport {
  const events = [...store.stream(taskId)].map(({ revision, event }) => ({ revision, ...event }));
  const code = (e: (typeof events)[number]) => (e.disposition.admitted ? 'ok' : e.disposition.code);
  const decisions = events
    .filter((e) => e.type === 'decision.submit')
    .map((e): [string, number, string] => [String(e.data['candidateId']), Number(e.data['generation']), code(e)]);
  const projected = z
    .object({
      state: z.string(),
      snapshot: z.object({
        context: z.object({ effect: z.object({ status: z.string(), requestId: z.string() }).nullable() }),
      }),
    })
    .parse(store.projection(taskId));
  const runs = taskRuns({ events, object: (digest) => store.getObject(digest, 'receipt').body });
  const mine = entries.filter((e) => e.target === maintenanceOf(t).target);
  const requestId = `${taskId}/a1/g1/effect`;
  expect(
    'A decided maintain in process 1; B decided continue in the fresh process',
    runs.map((r) => [r.generation, r.harness, r.purpose]),
    [[1, t.a, 'maintain'], [2, t.b, 'continue'], ...(t.first === 'reconcile' ? [] : [[3, t.b, 'continue']])],
  );
  expect(
    `B's ${t.first} ${t.first === 'reconcile' ? 'admitted' : 'refused effect_unknown, then reconcile admitted'}`,
    decisions,
    [
      ['record-maintenance', 1, 'ok'],
      ...(t.first === 'reconcile' ? [] : [[t.first, 2, 'effect_unknown']]),
      ['reconcile', t.first === 'reconcile' ? 2 : 3, 'ok'],
    ],
  );
  expect(
    'one intent, lost, reconciled by lookup: recorded, the Task waits',
    [
      events.filter((e) => e.type === 'effect.intend').length,
      events.filter((e) => e.type === 'effect.lost').length,
      events.filter((e) => e.type === 'effect.reconcile').map((e) => (e.data['receiptDigests'] as unknown[]).length),
      projected.state,
      projected.snapshot.context.effect,
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
    state: projected.state,
    effect: projected.snapshot.context.effect?.status ?? null,
    decisions,
    entries: mine.length,
  };
}

/** One line per trajectory and the baseline's, as the demo prints them. */
export function continuationText(report: ContinuationReport): string[] {
  const width = Math.max(...report.trajectories.map((t) => t.name.length), 'plain-retry baseline'.length);
  const lines = report.trajectories.map((t) => {
    const chose = t.decisions
      .slice(1)
      .map(([candidate, generation, code]) =>
        code === 'ok' ? `${candidate} admitted g${generation}` : `${candidate} refused ${code} g${generation}`,
      )
      .join(', ');
    return `${t.name.padEnd(width)}  A ${t.a}: answer lost, Effect unknown (pid ${report.pids.lose}); fresh process B ${t.b} (pid ${report.pids.continue}): ${chose}; Effect ${t.effect ?? 'none'}, Task ${t.state}; ledger entries: ${t.entries}`;
  });
  const one = report.trajectories.filter((t) => t.entries === 1).length;
  return [
    ...lines,
    `${'plain-retry baseline'.padEnd(width)}  answer lost (${report.baseline.lost}), retried under a new request id: ledger entries: ${report.baseline.entries}`,
    `continuation after loss: ${one}/${TRAJECTORIES.length} trajectories with exactly one ledger entry; plain retry: ${report.baseline.entries} (read from ${report.ledgerFile})`,
  ];
}
