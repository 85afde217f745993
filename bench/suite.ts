// The benchmark suite as one function, called by `npm run bench` (bench/run.ts) and by
// `ordivon bench` (bench/cli.ts): runs the chosen scenarios in one process, computes
// the headline and writes <out>/<date>.json and, when a recovery, floor or peer scenario ran,
// <out>/recovery-<date>.svg.
//
// Every scenario module is loaded with import() when it runs, after the packages it needs are
// found: the SQLite peer (better-sqlite3), the Temporal peer (@temporalio/*) and the cluster's
// PostgreSQL helper (compiled with the tests) are not part of an installed package, and a
// scenario that needs one is skipped with the reason, in the output and in the results file (the
// confinement scenario also needs the README's example, and says itself when no sandbox can be had;
// the loop-cancel scenario needs the example too).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLOOR_ALL, FLOOR_EVENTS, VERIFIED, headline, type Headline } from './report/headline.js';
import { recoveryPlot } from './report/plot.js';
import type { BenchContext, BenchRow, GivenHistory, Size } from './report/results-model.js';
import { formatMs, machine } from './util.js';
import { SCENARIOS, type Scenario } from './scenarios.js';

export { SCENARIOS, type Scenario } from './scenarios.js';

/** A scenario that was not run, and why. */
export interface Skipped {
  scenario: Scenario;
  reason: string;
}

export interface SuiteOptions {
  quick: boolean;
  only: readonly Scenario[];
  /** Recovery-curve sizes of the recovery, floor and peer scenarios (default by `quick`). */
  sizes?: Size[];
  /** Run the core commit's rebuildAll ("before") in the recovery scenario. */
  baseline: boolean;
  /** Where the results file and the SVG go (created if absent). */
  outDir: string;
  /** A copy of a state root that the recovery and floor scenarios time instead of generated histories. */
  history?: GivenHistory;
  /** Progress lines (stderr). */
  log: (line: string) => void;
  /** Whether a module can be loaded; default `resolvable`. Tests inject one to see the skips. */
  resolve?: (specifier: string) => boolean;
}

/** What one run of the suite wrote, and its printed report. */
export interface SuiteRun {
  results: BenchResults;
  jsonPath: string;
  /** Absent when no recovery, floor or peer scenario ran. */
  svgPath?: string;
  /** The table, the headline, the notes, the machine and the files written: what the runners print. */
  report: string;
}

export interface BenchResults {
  date: string;
  quick: boolean;
  machine: ReturnType<typeof machine> & { loadAverageBefore: number[]; loadAverageAfter: number[] };
  durationS: number;
  /** The state root whose copy the recovery and floor rows timed, when one was given. */
  stateRoot?: { path: string; tasks: number; events: number; copied: GivenHistory['copied'] };
  headline: Headline[];
  notes: string[];
  skipped: Skipped[];
  rows: BenchRow[];
}

type Outcome = BenchRow[] | { rows: BenchRow[]; note?: string };

interface Plan {
  /** Modules the scenario loads that an installed package may lack (bare names, or paths relative to bench/). */
  needs: readonly string[];
  /** What they are, for the skip's reason. */
  why?: string;
  run(ctx: BenchContext, options: SuiteOptions): Promise<Outcome>;
}

const sized = (o: SuiteOptions) => (o.sizes ? { sizes: o.sizes } : {});
const given = (o: SuiteOptions) => (o.history ? { history: o.history } : {});
const SQLITE = 'the SQLite peer, a devDependency';
const TEMPORAL = 'the Temporal peer, devDependencies';

/** Each scenario: what it needs, and how it runs (its module loaded only then). */
const PLANS: Record<Scenario, Plan> = {
  recovery: {
    needs: [],
    run: async (ctx, o) =>
      (await import('./recovery.bench.js')).runRecoveryBench({
        ...ctx,
        ...sized(o),
        ...given(o),
        baseline: o.baseline,
      }),
  },
  floor: {
    needs: [],
    run: async (ctx, o) =>
      (await import('./floors/floor.bench.js')).runFloorBench({ ...ctx, ...sized(o), ...given(o) }),
  },
  peer: {
    needs: ['better-sqlite3'],
    why: SQLITE,
    run: async (ctx, o) => (await import('./peers/peer.bench.js')).runPeerBench({ ...ctx, ...sized(o) }),
  },
  checkpoint: { needs: [], run: async (ctx) => (await import('./checkpoint.bench.js')).runCheckpointBench(ctx) },
  disk: { needs: [], run: async (ctx) => (await import('./floors/disk-floor.bench.js')).runDiskFloorBench(ctx) },
  admission: {
    needs: ['better-sqlite3'],
    why: `${SQLITE}, for its SQLite rows`,
    run: async (ctx) => (await import('./admission.bench.js')).runAdmissionBench(ctx),
  },
  temporal: {
    needs: ['@temporalio/worker', '@temporalio/common', '@temporalio/proto', '@temporalio/workflow'],
    why: TEMPORAL,
    run: async (ctx) => (await import('./peers/temporal-peer.bench.js')).runTemporalPeerBench(ctx),
  },
  reconciliation: {
    needs: [],
    run: async (ctx) => (await import('./reconciliation-hook.js')).runReconciliationHook(ctx),
  },
  cluster: {
    needs: ['pg', '../test/support/postgres.js'],
    why: 'the throwaway PostgreSQL server of the tests, which an installed package does not hold',
    run: async (ctx) => (await import('./cluster/cluster.bench.js')).runClusterBench(ctx),
  },
  startup: { needs: [], run: async (ctx) => (await import('./startup.bench.js')).runStartupBench(ctx) },
  confinement: {
    needs: ['../../examples/quickstart/agent.mjs'],
    why: "the README's worked example (examples/quickstart), which an installed package does not hold",
    run: async (ctx) => (await import('./confinement.bench.js')).runConfinementBench(ctx),
  },
  'loop-cancel': {
    needs: ['../../examples/quickstart/task.json'],
    why: "the README's worked example (examples/quickstart), which an installed package does not hold",
    run: async (ctx) => (await import('./loop-cancel.bench.js')).runLoopCancelBench(ctx),
  },
  peers: {
    needs: ['../test/support/postgres.js'],
    why: 'the throwaway PostgreSQL server of the tests, which an installed package does not hold',
    run: async (ctx) => (await import('./peers/peers.bench.js')).runPeersBench(ctx),
  },
};

/** What each scenario needs beyond the package's dependencies (for docs and tests). */
export function scenarioNeeds(scenario: Scenario): readonly string[] {
  return PLANS[scenario].needs;
}

/**
 * Whether `specifier` can be loaded from bench/: a package by Node's resolution
 * (`import.meta.resolve`, which throws for one that is not installed), a relative path by its file.
 */
export function resolvable(specifier: string): boolean {
  try {
    if (specifier.startsWith('.')) return existsSync(fileURLToPath(new URL(specifier, import.meta.url)));
    import.meta.resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

/** Runs the scenarios of `options.only` (in the suite's order) and writes the results; see the file's header. */
export async function runSuite(options: SuiteOptions): Promise<SuiteRun> {
  const started = performance.now();
  const resolve = options.resolve ?? resolvable;
  const ctx: BenchContext = {
    quick: options.quick,
    log: (line) => options.log(`[bench ${((performance.now() - started) / 1000).toFixed(0)}s] ${line}`),
  };
  const loadBefore = loadavg();
  const rows: BenchRow[] = [];
  const notes: string[] = [];
  const skipped: Skipped[] = [];
  const only = new Set<Scenario>(options.only);
  for (const scenario of SCENARIOS) {
    if (!only.has(scenario)) continue;
    const plan = PLANS[scenario];
    const missing = plan.needs.filter((specifier) => !resolve(specifier));
    if (missing.length > 0) {
      const reason = `${missing.join(', ')} cannot be resolved (${plan.why ?? 'not installed'})`;
      skipped.push({ scenario, reason });
      notes.push(`${scenario} skipped: ${reason}`);
      ctx.log(`${scenario} skipped: ${reason}`);
      continue;
    }
    ctx.log(`${scenario} …`);
    const outcome = await plan.run(ctx, options);
    if (Array.isArray(outcome)) {
      rows.push(...outcome);
      continue;
    }
    rows.push(...outcome.rows);
    if (outcome.note) {
      notes.push(outcome.note);
      // The reconciliation, cluster and confinement scenarios say themselves when they could not run.
      const own = `${scenario} skipped: `;
      if (outcome.rows.length === 0 && outcome.note.startsWith(own))
        skipped.push({ scenario, reason: outcome.note.slice(own.length) });
    }
  }

  const heads = headline(rows);
  const when = new Date();
  const stamp = when
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const results: BenchResults = {
    date: when.toISOString(),
    quick: options.quick,
    machine: { ...machine(), loadAverageBefore: loadBefore, loadAverageAfter: loadavg() },
    durationS: Math.round((performance.now() - started) / 1000),
    ...(options.history
      ? {
          stateRoot: {
            path: options.history.source,
            tasks: options.history.tasks,
            events: options.history.events,
            copied: options.history.copied,
          },
        }
      : {}),
    headline: heads,
    notes,
    skipped,
    rows,
  };
  mkdirSync(options.outDir, { recursive: true });
  const jsonPath = join(options.outDir, `${stamp}.json`);
  writeFileSync(jsonPath, JSON.stringify(results, null, 2) + '\n');
  // The plot is of recovery against history length: a run without those scenarios draws none.
  const plotted = rows.some((r) => r.scenario === 'recovery' || r.scenario === 'floor' || r.scenario === 'peer');
  const svgPath = plotted ? join(options.outDir, `recovery-${stamp}.svg`) : undefined;
  if (svgPath) writeFileSync(svgPath, plot(rows, results.machine, options.history));
  const m = results.machine;
  const report = [
    table(rows),
    '\n' + headlineText(heads),
    ...notes.map((note) => `note: ${note}`),
    `\nmachine: ${m.cpus} × ${m.model}, ${m.memoryGiB} GiB, Node ${m.node}; load average before ${m.loadAverageBefore.map((l) => l.toFixed(1)).join(' ')}, after ${m.loadAverageAfter.map((l) => l.toFixed(1)).join(' ')}`,
    `wrote ${jsonPath}${svgPath ? `\nwrote ${svgPath}` : ' (no recovery scenario ran: no plot)'}`,
  ].join('\n');
  return { results, jsonPath, ...(svgPath ? { svgPath } : {}), report };
}

function table(rows: BenchRow[]): string {
  const lines = rows.map((r) => [
    r.scenario,
    r.name,
    r.tasks === undefined ? '' : r.tasks.toLocaleString('en-US'),
    r.events === undefined ? '' : r.events.toLocaleString('en-US'),
    formatMs(r.medianMs),
    r.minMs === undefined ? '' : `${formatMs(r.minMs)} – ${formatMs(r.maxMs ?? r.minMs)}`,
    String(r.iterations),
    r.rate === undefined ? '' : `${Math.round(r.rate).toLocaleString('en-US')} ${r.rateUnit ?? ''}`,
  ]);
  const header = ['scenario', 'what', 'tasks', 'events', 'median', 'range', 'runs', 'rate'];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

function headlineText(heads: Headline[]): string {
  return [
    'headline (ratios from this run):',
    ...heads.map((h) => `  ${h.met === undefined ? '·' : h.met ? '✓' : '✗'} ${h.text}`),
  ].join('\n');
}

function plot(rows: BenchRow[], m: ReturnType<typeof machine>, history?: GivenHistory): string {
  const pick = (scenario: BenchRow['scenario'], name: string) =>
    rows
      .filter((r) => r.scenario === scenario && r.name === name && r.events)
      .map((r) => ({ x: r.events!, y: r.medianMs / 1000 }));
  return recoveryPlot(
    'Ordivon Host: recovery time vs history length',
    `${m.cpus} × ${m.model}, Node ${m.node}; medians; ${history ? `a copy of ${history.source}` : '100 events per Task'}`,
    [
      {
        name: 'verified recovery (boot → serving)',
        color: '#1f6feb',
        points: pick('recovery', VERIFIED),
      },
      {
        name: 'SQLite peer (same checks)',
        color: '#d1242f',
        points: pick('peer', 'peer: SQLite verified recovery → live Tasks, worker threads'),
      },
      {
        name: 'before (core commit)',
        color: '#8250df',
        dashed: true,
        points: pick('recovery', 'before: rebuildAll of the core commit (one thread)'),
      },
      {
        name: 'floor: all bytes read',
        color: '#1a7f37',
        points: pick('floor', FLOOR_ALL),
      },
      {
        name: 'floor: events only',
        color: '#57ab5a',
        dashed: true,
        points: pick('floor', FLOOR_EVENTS),
      },
    ],
  );
}
