import type { W1ResultRow, W1Variant } from '../baselines/index.js';
import { W1_TRAJECTORIES, type W1Trajectory } from '../host-path/faults.js';

export const W1_VARIANTS = ['a-retry', 'b-key', 'c-lookup', 'd-host'] as const satisfies readonly W1Variant[];

/** The counted columns, summed over a variant's trajectories. */
const COUNTS = [
  'duplicateEffects',
  'lostEffects',
  'falseSuccess',
  'falseFailure',
  'unsafeRedispatches',
  'staleEvidenceUsed',
  'operatorInterventions',
  'stateObjects',
] as const;
type Count = (typeof COUNTS)[number];

export type W1Summary = Record<Count, number> & {
  variant: W1Variant;
  trajectories: number;
  /** The median and the slowest trajectory's time to its outcome, in ms. */
  medianMs: number;
  maxMs: number;
  /** Non-blank, non-comment lines of the code the variant needs beside the provider. */
  permanentCode: number;
};

const HEAD: Record<Count | 'medianMs' | 'maxMs' | 'permanentCode', string> = {
  duplicateEffects: 'duplicate',
  lostEffects: 'lost',
  falseSuccess: 'false success',
  falseFailure: 'false failure',
  unsafeRedispatches: 'unsafe redispatch',
  staleEvidenceUsed: 'stale evidence',
  operatorInterventions: 'operator',
  stateObjects: 'state objects',
  medianMs: 'median ms',
  maxMs: 'max ms',
  permanentCode: 'code lines',
};

export function summarise(rows: readonly W1ResultRow[], lines: (variant: W1Variant) => number): W1Summary[] {
  return W1_VARIANTS.flatMap((variant) => {
    const mine = rows.filter((row) => row.variant === variant);
    if (mine.length === 0) return [];
    const times = mine.map((row) => row.elapsedMs).sort((a, b) => a - b);
    const counts = Object.fromEntries(
      COUNTS.map((count) => [count, mine.reduce((sum, row) => sum + row[count], 0)]),
    ) as Record<Count, number>;
    return [
      {
        variant,
        trajectories: mine.length,
        ...counts,
        medianMs: times[Math.floor(times.length / 2)] ?? 0,
        maxMs: times.at(-1) ?? 0,
        permanentCode: lines(variant),
      },
    ];
  });
}

/** The table as Markdown lines, one row per variant. */
export function tableOf(summary: readonly W1Summary[]): string[] {
  const columns = Object.keys(HEAD) as Array<keyof typeof HEAD>;
  return [
    `| variant | trajectories | ${columns.map((c) => HEAD[c]).join(' | ')} |`,
    `|---|---:|${columns.map(() => '---:').join('|')}|`,
    ...summary.map((s) => `| ${s.variant} | ${s.trajectories} | ${columns.map((c) => s[c]).join(' | ')} |`),
  ];
}

/** Faults whose answer is lost after the provider committed: only a lookup can tell. */
const ANSWER_LOST: ReadonlySet<string> = new Set([
  'commit-then-drop',
  'host-sigkill',
  'delay-past-timeout',
  'provider-restart',
  'lookup-expired',
]);

/** The expected outcome of the Host path on a trajectory (docs/world-w1.md, "The comparison"). */
export function hostExpectation(trajectory: Pick<W1Trajectory, 'operation' | 'fault'>): {
  outcome: W1ResultRow['outcome'];
  performs: number;
} {
  const { operation, fault } = trajectory;
  // The endpoint answering under another key: refused before the intent, nothing sent.
  if (fault === 'identity-changed') return { outcome: 'refused', performs: 0 };
  if (!ANSWER_LOST.has(fault)) return { outcome: 'succeeded', performs: 1 };
  // Only an order's key is looked up, and only inside its window; a transfer's id was in the lost answer.
  return { outcome: operation === 'orders' && fault !== 'lookup-expired' ? 'succeeded' : 'asked', performs: 1 };
}

const key = (row: Pick<W1ResultRow, 'operation' | 'fault'>) => `${row.operation}-${row.fault}`;

/**
 * What must hold: the Host path has no duplicate, lost or falsely successful Effect and no unsafe
 * redispatch or stale evidence on any trajectory, and ends each as `hostExpectation` says (a lost
 * answer no lookup can answer goes to an operator, never a blind retry); each weaker variant shows
 * the failure it exists to show (checked when every trajectory ran). Returns the failures, each
 * naming its trajectory.
 */
export function expectationsOf(rows: readonly W1ResultRow[], trajectories: readonly W1Trajectory[]): string[] {
  const failed: string[] = [];
  const of = (variant: W1Variant) => rows.filter((row) => row.variant === variant);
  for (const row of of('d-host')) {
    const name = key(row);
    for (const count of [
      'duplicateEffects',
      'lostEffects',
      'falseSuccess',
      'unsafeRedispatches',
      'staleEvidenceUsed',
    ] as const)
      if (row[count] > 0) failed.push(`d-host ${name}: ${count} ${row[count]}`);
    const expected = hostExpectation(row);
    if (row.outcome !== expected.outcome || row.performs !== expected.performs)
      failed.push(
        `d-host ${name}: ended ${row.outcome} with ${row.performs} perform(s), expected ${expected.outcome} with ${expected.performs}`,
      );
  }
  if (!W1_TRAJECTORIES.every((t) => trajectories.some((ran) => ran.name === t.name))) return failed;
  const total = (variant: W1Variant, count: Count) => of(variant).reduce((sum, row) => sum + row[count], 0);
  const shows: Array<[W1Variant, Count, string]> = [
    ['a-retry', 'duplicateEffects', 'retrying on error duplicates a committed Effect whose answer was lost'],
    ['b-key', 'duplicateEffects', 'a key the provider ignores, or one past its window, does not deduplicate'],
    ['c-lookup', 'duplicateEffects', 'where nothing can be looked up, it re-sends blindly'],
    ['a-retry', 'staleEvidenceUsed', 'it performs on a target or endpoint that moved'],
    ['b-key', 'staleEvidenceUsed', 'it performs on a target or endpoint that moved'],
    ['c-lookup', 'staleEvidenceUsed', 'it performs on a target or endpoint that moved'],
  ];
  for (const [variant, count, why] of shows)
    if (total(variant, count) === 0) failed.push(`${variant}: ${count} 0, but ${why}`);
  return failed;
}
