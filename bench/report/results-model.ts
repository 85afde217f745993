/** One measured figure of a scenario, as printed in the table and written to the results JSON. */
export interface BenchRow {
  scenario:
    | 'recovery'
    | 'floor'
    | 'checkpoint'
    | 'admission'
    | 'reconciliation'
    | 'peer'
    | 'disk'
    | 'temporal'
    | 'cluster'
    | 'startup'
    | 'confinement'
    | 'loop-cancel'
    | 'peers';
  /** What exactly was timed. */
  name: string;
  tasks?: number;
  /** History length in events (Tasks × events per Task). */
  events?: number;
  medianMs: number;
  minMs?: number;
  maxMs?: number;
  iterations: number;
  /** A rate derived from the median, when the scenario is about throughput. */
  rate?: number;
  rateUnit?: string;
  /** Extra facts (counts, concurrency, jobs). */
  detail?: Record<string, number | string | boolean>;
}

/**
 * One headline figure: what was measured against which floor, the ratio, and whether its goal
 * (issue 33's table, issue 29's startup, issue 43's confined start) was met — undefined when it
 * has no goal or its inputs are too small to judge.
 */
export interface Headline {
  key: string;
  text: string;
  value: number;
  goal?: string;
  met?: boolean;
}

export interface BenchContext {
  quick: boolean;
  /** Progress lines go here (stderr); results are returned, not printed. */
  log: (line: string) => void;
}

/**
 * A history the recovery and floor scenarios time instead of generating their own: a copy of a
 * user's state root (`ordivon bench --state DIR`), with its counts.
 */
export interface GivenHistory {
  /** The copy that is booted and scanned. */
  root: string;
  /** The state root it was copied from (never written). */
  source: string;
  tasks: number;
  /** Events of all its Tasks. */
  events: number;
  /** How: its files as they were (no process held the root), or each LMDB environment as of one read transaction. */
  copied: 'files' | 'read transaction';
}

/** Recovery-curve sizes: Tasks × events per Task. */
export interface Size {
  tasks: number;
  events: number;
}

export const FULL_SIZES: Size[] = [
  { tasks: 100, events: 100 },
  { tasks: 1_000, events: 100 },
  { tasks: 10_000, events: 100 },
];
export const QUICK_SIZES: Size[] = [{ tasks: 100, events: 100 }];

/** The sizes a run generates a history of: those asked for, else the quick or the full set. */
export function benchSizes(ctx: BenchContext & { sizes?: Size[] }): Size[] {
  return ctx.sizes ?? (ctx.quick ? QUICK_SIZES : FULL_SIZES);
}
