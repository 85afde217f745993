// The benchmark runner (`npm run bench [-- --quick]`): runs every scenario in one process, prints
// one table and the headline ratios against issue 21's goals, each beside the floor it is judged
// against (measured in the same run), and writes
// bench/results/<date>.json and, when a recovery, floor or peer scenario ran,
// bench/results/recovery-<date>.svg (recovery time against history length for verified recovery,
// the floors and the SQLite peer).
//
// Options: --quick (small sizes, < 2 minutes), --only recovery,floor,peer,checkpoint,disk,
// admission,temporal,reconciliation,cluster, --sizes 100x100,1000x100, --no-baseline (skip the core commit's rebuildAll),
// --out DIR. Generated histories are cached (see generate.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { runAdmissionBench } from './admission.bench.js';
import { runCheckpointBench } from './checkpoint.bench.js';
import { runClusterBench } from './cluster.bench.js';
import { runDiskFloorBench } from './disk-floor.bench.js';
import { runFloorBench } from './floor.bench.js';
import { FLOOR_ALL, FLOOR_EVENTS, VERIFIED, headline, type Headline } from './headline.js';
import { runPeerBench } from './peer.bench.js';
import { recoveryPlot } from './plot.js';
import { runReconciliationHook } from './reconciliation-hook.js';
import { runRecoveryBench } from './recovery.bench.js';
import { runTemporalPeerBench } from './temporal-peer.bench.js';
import type { BenchContext, BenchRow, Size } from './results-model.js';
import { parseScriptArgs, scriptArgsOrExit } from '../scripts/cli-io.js';
import { formatMs, machine } from './util.js';

const SCENARIOS = [
  'recovery',
  'floor',
  'peer',
  'checkpoint',
  'disk',
  'admission',
  'temporal',
  'reconciliation',
  'cluster',
] as const;

export const USAGE = `usage: npm run bench -- [--quick] [--only ${SCENARIOS.join(',')}] [--sizes TASKSxEVENTS,...] [--no-baseline] [--out DIR]`;

const SIZE = /^([1-9][0-9]{0,7})x([1-9][0-9]{0,7})$/;
const BenchArgs = z.object({
  quick: z.boolean().default(false),
  only: z
    .string()
    .default(SCENARIOS.join(','))
    .transform((text) => text.split(','))
    .pipe(z.array(z.enum(SCENARIOS)).min(1)),
  sizes: z
    .string()
    .transform((text) => text.split(','))
    .pipe(z.array(z.string().regex(SIZE, 'expected TASKSxEVENTS, e.g. 1000x100')).min(1))
    .transform((parts): Size[] =>
      parts.map((part) => {
        const [, tasks, events] = SIZE.exec(part)!;
        return { tasks: Number(tasks), events: Number(events) };
      }),
    )
    .optional(),
  'no-baseline': z.boolean().default(false),
  out: z.string().min(1).optional(),
  help: z.boolean().default(false),
});
export type BenchArgs = z.output<typeof BenchArgs>;

const OPTIONS = {
  quick: { type: 'boolean' },
  only: { type: 'string' },
  sizes: { type: 'string' },
  'no-baseline': { type: 'boolean' },
  out: { type: 'string' },
} as const;

/** The runner's arguments, parsed: a usage error names the option (`code: 'usage'`); nothing runs or is written. */
export function parseBenchArgs(argv: string[]): ReturnType<typeof parseScriptArgs<typeof BenchArgs>> {
  return parseScriptArgs(argv, { ...OPTIONS, help: { type: 'boolean', short: 'h' } }, BenchArgs);
}

export async function main(argv: string[]): Promise<number> {
  const args = scriptArgsOrExit('bench', USAGE, argv, OPTIONS, BenchArgs);
  const { quick, sizes } = args;
  const only = new Set<string>(args.only);
  const outDir = args.out ?? fileURLToPath(new URL('../../bench/results/', import.meta.url));
  const ctx: BenchContext = {
    quick,
    log: (line) => console.error(`[bench ${((performance.now() - started) / 1000).toFixed(0)}s] ${line}`),
  };
  const started = performance.now();
  const loadBefore = loadavg();
  const rows: BenchRow[] = [];
  const notes: string[] = [];
  const run = async (name: (typeof SCENARIOS)[number], fn: () => Promise<BenchRow[]>) => {
    if (!only.has(name)) return;
    ctx.log(`${name} …`);
    rows.push(...(await fn()));
  };
  await run('recovery', () =>
    runRecoveryBench({ ...ctx, ...(sizes ? { sizes } : {}), baseline: !args['no-baseline'] }),
  );
  await run('floor', () => runFloorBench({ ...ctx, ...(sizes ? { sizes } : {}) }));
  await run('peer', () => runPeerBench({ ...ctx, ...(sizes ? { sizes } : {}) }));
  await run('checkpoint', () => runCheckpointBench(ctx));
  await run('disk', () => runDiskFloorBench(ctx));
  await run('admission', () => runAdmissionBench(ctx));
  await run('temporal', () => runTemporalPeerBench(ctx));
  // Scenarios that may be skipped say why in a note of the run.
  const noted = async (pending: Promise<{ rows: BenchRow[]; note?: string }>) => {
    const result = await pending;
    if (result.note) notes.push(result.note);
    return result.rows;
  };
  await run('reconciliation', () => noted(runReconciliationHook(ctx)));
  await run('cluster', () => noted(runClusterBench(ctx)));

  const heads = headline(rows);
  const when = new Date();
  const stamp = when
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const result = {
    date: when.toISOString(),
    quick,
    machine: { ...machine(), loadAverageBefore: loadBefore, loadAverageAfter: loadavg() },
    durationS: Math.round((performance.now() - started) / 1000),
    headline: heads,
    notes,
    rows,
  };
  mkdirSync(outDir, { recursive: true });
  const jsonPath = join(outDir, `${stamp}.json`);
  writeFileSync(jsonPath, JSON.stringify(result, null, 2) + '\n');
  // The plot is of recovery against history length: a run without those scenarios draws none.
  const plotted = rows.some((r) => r.scenario === 'recovery' || r.scenario === 'floor' || r.scenario === 'peer');
  const svgPath = join(outDir, `recovery-${stamp}.svg`);
  if (plotted) writeFileSync(svgPath, plot(rows, result.machine));
  console.log(table(rows));
  console.log('\n' + headlineText(heads));
  for (const note of notes) console.log(`note: ${note}`);
  const m = result.machine;
  console.log(
    `\nmachine: ${m.cpus} × ${m.model}, ${m.memoryGiB} GiB, Node ${m.node}; load average before ${m.loadAverageBefore.map((l) => l.toFixed(1)).join(' ')}, after ${m.loadAverageAfter.map((l) => l.toFixed(1)).join(' ')}`,
  );
  console.log(`wrote ${jsonPath}${plotted ? `\nwrote ${svgPath}` : ' (no recovery scenario ran: no plot)'}`);
  return 0;
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

function plot(rows: BenchRow[], m: ReturnType<typeof machine>): string {
  const pick = (scenario: BenchRow['scenario'], name: string) =>
    rows
      .filter((r) => r.scenario === scenario && r.name === name && r.events)
      .map((r) => ({ x: r.events!, y: r.medianMs / 1000 }));
  return recoveryPlot(
    'Ordivon Host: recovery time vs history length',
    `${m.cpus} × ${m.model}, Node ${m.node}; medians; 100 events per Task`,
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

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
