import {
  BROWSER_NOT_APPLICABLE,
  surfaceOf,
  type W1ResultRow,
  type W1Surface,
  type W1Variant,
} from '../baselines/index.js';
import { W1_TRAJECTORIES, W1_WEBAPP_TRAJECTORIES, type W1Trajectory } from '../host-path/faults.js';

export const W1_VARIANTS = ['a-retry', 'b-key', 'c-lookup', 'd-host'] as const satisfies readonly W1Variant[];
export const W1_SURFACES = ['http', 'browser'] as const satisfies readonly W1Surface[];

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
  /** `http`: the provider's operations; `browser`: the web app's order form in Chromium. */
  surface: W1Surface;
  trajectories: number;
  /** The median and the slowest trajectory's time to its outcome, in ms. */
  medianMs: number;
  maxMs: number;
  /** Non-blank, non-comment lines of the code the variant needs beside the provider or the web app. */
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

/** One summary per surface and variant that has rows, the provider's surface first. */
export function summarise(
  rows: readonly W1ResultRow[],
  lines: (variant: W1Variant, surface: W1Surface) => number,
): W1Summary[] {
  return W1_SURFACES.flatMap((surface) =>
    W1_VARIANTS.flatMap((variant) => {
      const mine = rows.filter((row) => row.variant === variant && surfaceOf(row.operation) === surface);
      if (mine.length === 0) return [];
      const times = mine.map((row) => row.elapsedMs).sort((a, b) => a - b);
      const counts = Object.fromEntries(
        COUNTS.map((count) => [count, mine.reduce((sum, row) => sum + row[count], 0)]),
      ) as Record<Count, number>;
      return [
        {
          variant,
          surface,
          trajectories: mine.length,
          ...counts,
          medianMs: times[Math.floor(times.length / 2)] ?? 0,
          maxMs: times.at(-1) ?? 0,
          permanentCode: lines(variant, surface),
        },
      ];
    }),
  );
}

/**
 * The table as Markdown lines, one row per surface and variant; a variant that does not apply to
 * the browser (b: a form has no key) is a row of n/a where browser rows ran, and a line says why.
 */
export function tableOf(summary: readonly W1Summary[]): string[] {
  const columns = Object.keys(HEAD) as Array<keyof typeof HEAD>;
  const browser = summary.some((s) => s.surface === 'browser');
  const na = Object.entries(BROWSER_NOT_APPLICABLE);
  const rows = W1_SURFACES.flatMap((surface) =>
    W1_VARIANTS.flatMap((variant) => {
      const s = summary.find((one) => one.variant === variant && one.surface === surface);
      if (s) return [`| ${variant} | ${surface} | ${s.trajectories} | ${columns.map((c) => s[c]).join(' | ')} |`];
      return surface === 'browser' && browser && variant in BROWSER_NOT_APPLICABLE
        ? [`| ${variant} | ${surface} | n/a | ${columns.map(() => 'n/a').join(' | ')} |`]
        : [];
    }),
  );
  return [
    `| variant | surface | trajectories | ${columns.map((c) => HEAD[c]).join(' | ')} |`,
    `|---|---|---:|${columns.map(() => '---:').join('|')}|`,
    ...rows,
    ...(browser ? na.map(([variant, why]) => `${variant} on the browser: n/a, ${why}`) : []),
  ];
}

/** Faults whose answer is lost after the system committed: only a lookup can tell. */
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
  // The endpoint answering under another key, the site stating another identity: refused before the intent, nothing sent.
  if (fault === 'identity-changed') return { outcome: 'refused', performs: 0 };
  if (!ANSWER_LOST.has(fault)) return { outcome: 'succeeded', performs: 1 };
  // What a lookup can answer: an order's key inside its window, the web app's history by note (no
  // window); a transfer's id was in the lost answer, a message has no lookup.
  const answers = operation === 'webapp-orders' || (operation === 'orders' && fault !== 'lookup-expired');
  return { outcome: answers ? 'succeeded' : 'asked', performs: 1 };
}

const key = (row: Pick<W1ResultRow, 'operation' | 'fault'>) => `${row.operation}-${row.fault}`;

/** What each weaker variant exists to show, per surface: the variant, the count that must not be 0, and why. */
const SHOWS: Record<W1Surface, Array<[W1Variant, Count, string]>> = {
  http: [
    ['a-retry', 'duplicateEffects', 'retrying on error duplicates a committed Effect whose answer was lost'],
    ['b-key', 'duplicateEffects', 'a key the provider ignores, or one past its window, does not deduplicate'],
    ['c-lookup', 'duplicateEffects', 'where nothing can be looked up, it re-sends blindly'],
    ['a-retry', 'staleEvidenceUsed', 'it performs on a target or endpoint that moved'],
    ['b-key', 'staleEvidenceUsed', 'it performs on a target or endpoint that moved'],
    ['c-lookup', 'staleEvidenceUsed', 'it performs on a target or endpoint that moved'],
  ],
  browser: [
    ['a-retry', 'duplicateEffects', 're-submitting a form whose confirmation was lost orders twice'],
    ['c-lookup', 'duplicateEffects', 'a client restarted without the note it submitted under cannot find its order'],
    ['a-retry', 'staleEvidenceUsed', 'it orders an item that moved, or from a site whose identity changed'],
    ['c-lookup', 'staleEvidenceUsed', 'it orders an item that moved, or from a site whose identity changed'],
  ],
};

/**
 * What must hold: the Host path has no duplicate, lost or falsely successful Effect and no unsafe
 * redispatch or stale evidence on any trajectory, and ends each as `hostExpectation` says (a lost
 * answer no lookup can answer goes to an operator, never a blind retry); each weaker variant shows
 * the failure it exists to show on each surface (checked when every trajectory of that surface
 * ran). Returns the failures, each naming its trajectory.
 */
export function expectationsOf(rows: readonly W1ResultRow[], trajectories: readonly W1Trajectory[]): string[] {
  const failed: string[] = [];
  for (const row of rows.filter((r) => r.variant === 'd-host')) {
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
  const everyOf: Record<W1Surface, readonly W1Trajectory[]> = {
    http: W1_TRAJECTORIES,
    browser: W1_WEBAPP_TRAJECTORIES,
  };
  for (const surface of W1_SURFACES) {
    if (!everyOf[surface].every((t) => trajectories.some((ran) => ran.name === t.name))) continue;
    const total = (variant: W1Variant, count: Count) =>
      rows
        .filter((row) => row.variant === variant && surfaceOf(row.operation) === surface)
        .reduce((sum, row) => sum + row[count], 0);
    for (const [variant, count, why] of SHOWS[surface])
      if (total(variant, count) === 0)
        failed.push(`${variant}${surface === 'browser' ? ' (browser)' : ''}: ${count} 0, but ${why}`);
  }
  return failed;
}
