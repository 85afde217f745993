import { z } from 'zod';
import { OBJECT_KINDS } from '../../objects/index.js';
import { EventStore, type EventRecord } from '../../store/index.js';
import { taskRuns } from '../../views/index.js';
import type { ContinuationTrajectory } from './continuation.js';

/**
 * Reading a continuation back (shared/continuation.ts): what each phase process printed, and
 * each trajectory's Task from a read-only store, checked against what its first choice implies.
 */

/** What one phase process printed: its pid and each Task at rest. */
export const PhaseReport = z.object({
  pid: z.number().int(),
  tasks: z.array(z.object({ name: z.string(), taskId: z.string(), state: z.string(), effect: z.string().nullable() })),
});
export type PhaseReport = z.infer<typeof PhaseReport>;

export function parsePhase(report: unknown, what: string): PhaseReport {
  const result = PhaseReport.safeParse(report);
  if (!result.success) throw new Error(`${what} reported ${JSON.stringify(report)}`);
  return result.data;
}

export interface ContinuationExpectation {
  scenario: string;
  what: string;
  held: boolean;
  observed: string;
}

export type Expect = (what: string, observed: unknown, expected: unknown) => void;

/** Expectations as they are checked: `check(scenario)` gives the `expect` of one scenario. */
export function expectations(): { list: ContinuationExpectation[]; check: (scenario: string) => Expect } {
  const list: ContinuationExpectation[] = [];
  return {
    list,
    check: (scenario) => (what, observed, expected) =>
      list.push({
        scenario,
        what,
        held: JSON.stringify(observed) === JSON.stringify(expected),
        observed: JSON.stringify(observed),
      }),
  };
}

/** The three processes, and process 1 leaving every Task waiting on an unknown Effect. */
export function checkPhases(
  check: (scenario: string) => Expect,
  trajectories: readonly ContinuationTrajectory[],
  lost: PhaseReport,
  continued: PhaseReport,
): { demo: number; lose: number; continue: number } {
  const pids = { demo: process.pid, lose: lost.pid, continue: continued.pid };
  check('continuation')(
    'three distinct processes: the demo, the one that lost the answer, the fresh one',
    new Set(Object.values(pids)).size,
    3,
  );
  for (const t of trajectories) {
    const first = lost.tasks.find((x) => x.name === t.name);
    check(t.name)(
      'process 1 left the Task waiting with its Effect unknown',
      [first?.state, first?.effect],
      ['waiting', 'unknown'],
    );
  }
  return pids;
}

/** Each trajectory's Task process 1 reported, read from the read-only store at `state` by `read`. */
export async function readTasks<T extends ContinuationTrajectory, R>(
  state: string,
  trajectories: readonly T[],
  lost: PhaseReport,
  read: (store: EventStore, t: T, taskId: string) => R,
): Promise<R[]> {
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  try {
    return trajectories.flatMap((t) => {
      const first = lost.tasks.find((x) => x.name === t.name);
      return first ? [read(store, t, first.taskId)] : [];
    });
  } finally {
    await store.close();
  }
}

/** One continuation Task as its journal and projection hold it. */
export interface ContinuationTask {
  events: Array<EventRecord & { revision: number }>;
  /** Each decision: candidate, generation and `ok` or the refusal code. */
  decisions: Array<[string, number, string]>;
  state: string;
  effect: { status: string; requestId: string } | null;
  /** Operator DecisionRequests about the Effect. */
  operatorRequests: number;
}

const Projected = z.object({
  state: z.string(),
  snapshot: z.object({
    context: z.object({
      effect: z.object({ status: z.string(), requestId: z.string() }).nullable(),
      requests: z.record(z.string(), z.object({ about: z.string() })),
    }),
  }),
});

/**
 * Reads one trajectory's Task and checks what every world's continuation shares: A ran the first
 * stage and B `continue`; B's first choice was admitted (reconcile) or refused `effect_unknown`
 * and reconcile admitted next.
 */
export function readContinuationTask(
  store: EventStore,
  t: ContinuationTrajectory,
  taskId: string,
  stages: { first: string; perform: string },
  expect: Expect,
): ContinuationTask {
  const events = [...store.stream(taskId)].map(({ revision, event }) => ({ revision, ...event }));
  const code = (e: (typeof events)[number]) => (e.disposition.admitted ? 'ok' : e.disposition.code);
  const decisions = events
    .filter((e) => e.type === 'decision.submit')
    .map((e): [string, number, string] => [String(e.data['candidateId']), Number(e.data['generation']), code(e)]);
  const projected = Projected.parse(store.projection(taskId));
  const runs = taskRuns({ events, object: (digest) => store.getObject(digest, 'receipt').body });
  const reconcileFirst = t.first === 'reconcile';
  expect(
    `A decided ${stages.first} in process 1; B decided continue in the fresh process`,
    runs.map((r) => [r.generation, r.harness, r.purpose]),
    [[1, t.a, stages.first], [2, t.b, 'continue'], ...(reconcileFirst ? [] : [[3, t.b, 'continue']])],
  );
  expect(
    `B's ${t.first} ${reconcileFirst ? 'admitted' : 'refused effect_unknown, then reconcile admitted'}`,
    decisions,
    [
      [stages.perform, 1, 'ok'],
      ...(reconcileFirst ? [] : [[t.first, 2, 'effect_unknown']]),
      ['reconcile', reconcileFirst ? 2 : 3, 'ok'],
    ],
  );
  const { context } = projected.snapshot;
  return {
    events,
    decisions,
    state: projected.state,
    effect: context.effect,
    operatorRequests: Object.values(context.requests).filter((r) => r.about === 'effect').length,
  };
}

/** B's choices after the first decision, as the demo's line says them. */
export function choicesText(decisions: ReadonlyArray<[string, number, string]>): string {
  return decisions
    .slice(1)
    .map(([candidate, generation, code]) =>
      code === 'ok' ? `${candidate} admitted g${generation}` : `${candidate} refused ${code} g${generation}`,
    )
    .join(', ');
}
