// Scenario: confinement — what bubblewrap costs (issue 43, item 7), in one run:
//
// 1. Process start: `/bin/true` through `spawnGroup`, spawn to exit, unconfined and confined in
//    the sandbox the Runtime builds for a job (`Confiner.sandboxFor`: a workspace under a state
//    root that is hidden, the default limits, as root the account nobody), with network `none`
//    (verification's and command jobs' default) and `host` (a harness's default). `/bin/true`
//    because it does nothing: what is left is the start itself, and the sandbox's share of it
//    (bwrap's namespaces and mounts, prlimit, setpriv) is not hidden under a program's own start
//    (`node -e 0` alone is ~40 ms here, the same confined or not). The three are run in turn,
//    their order rotating each round, so a change in the machine's load touches all alike.
//    Goal: a confined start ≤ 50 ms above an unconfined one (medians).
// 2. The README's worked example through a real Host (confinement-stage.ts): stage `investigate`
//    (assignment → run observed) and stage `fix` (assignment → verification recorded), with
//    confinement `bwrap` and `none`, interleaved; medians and their ratio, no goal.
//
//   node dist/bench/confinement.bench.js [--quick]
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { probeSandbox, spawnGroup, type Sandbox } from '../os/index.js';
import { Confiner } from '../runtime/index.js';
import { CONFINEMENT_START, type StartVariant } from './report/confinement-headline.js';
import type { BenchContext, BenchRow } from './report/results-model.js';
import { timingOf } from './startup.bench.js';
import { runQuickstartStages, STAGE_ROUNDS } from './confinement-stage.js';
import { scenarioArgs } from './util.js';

/** Timed rounds of the process start (each round starts all three variants once): 100, or 10 with --quick. */
export const START_ROUNDS = { full: 100, quick: 10 } as const;

/** The program started: it exits 0 at once, so the time is the start's. */
const PROGRAM = '/bin/true';

/** The p-th percentile (nearest rank) of `samples`. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A state root and a job's workspace in it, as the Runtime lays them out (the root 0700, the workspace 0755). */
function layout(): { root: string; workspace: string } {
  const root = mkdtempSync(join(tmpdir(), 'ordivon-bench-confinement-'));
  chmodSync(root, 0o700);
  const workspace = join(root, 'workspaces', 'bench-1', 'attempt-1');
  mkdirSync(workspace, { recursive: true, mode: 0o755 });
  return { root, workspace };
}

/**
 * Milliseconds from asking for the job's sandbox (as the Runtime does for each job) to the exit of
 * `PROGRAM` started in it by `spawnGroup`. Throws unless it exits 0.
 */
async function timedStart(confiner: Confiner, workspace: string, network: 'none' | 'host'): Promise<number> {
  const started = performance.now();
  const sandbox = confiner.sandboxFor('bench', workspace, undefined, network) as Sandbox | undefined;
  const child = spawnGroup(PROGRAM, [], { cwd: workspace, env: { PATH: '/usr/bin:/bin' }, sandbox });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin?.end();
  const result = await child;
  const ms = performance.now() - started;
  if (result.exitCode !== 0)
    throw new Error(
      `confinement: ${PROGRAM} ${sandbox ? `confined (network ${network})` : 'unconfined'} exited ${result.exitCode ?? result.signal}: ${stderr.trim() || result.shortMessage}`,
    );
  return ms;
}

/** The process-start rows: each variant's median, p95 and range; the confined ones with their difference from the unconfined. */
export async function timeProcessStarts(ctx: BenchContext & { rounds?: number }): Promise<BenchRow[]> {
  const rounds = ctx.rounds ?? (ctx.quick ? START_ROUNDS.quick : START_ROUNDS.full);
  const { root, workspace } = layout();
  try {
    const hidden = [root];
    const variants: Array<{ variant: StartVariant; confiner: Confiner; network: 'none' | 'host' }> = [
      { variant: 'unconfined', confiner: new Confiner({ mode: 'none', hidden }), network: 'none' },
      { variant: 'none', confiner: new Confiner({ mode: 'bwrap', hidden }), network: 'none' },
      { variant: 'host', confiner: new Confiner({ mode: 'bwrap', hidden }), network: 'host' },
    ];
    const samples = variants.map(() => [] as number[]);
    // Untimed rounds first: the first starts read bwrap, prlimit and setpriv from disk.
    for (let round = 0; round < 3; round++)
      for (const v of variants) await timedStart(v.confiner, workspace, v.network);
    for (let round = 0; round < rounds; round++)
      for (let k = 0; k < variants.length; k++) {
        const i = (round + k) % variants.length;
        const v = variants[i]!;
        samples[i]!.push(await timedStart(v.confiner, workspace, v.network));
      }
    const base = timingOf(samples[0]!);
    const rows = variants.map(({ variant, network }, i): BenchRow => {
      const t = timingOf(samples[i]!);
      const paired = samples[i]!.map((ms, round) => ms - samples[0]![round]!);
      return {
        scenario: 'confinement',
        name: CONFINEMENT_START[variant],
        ...t,
        detail: {
          program: PROGRAM,
          p95Ms: percentile(samples[i]!, 95),
          ...(variant === 'unconfined'
            ? {}
            : {
                network,
                user: process.getuid?.() === 0 ? 'nobody (the Host runs as root)' : 'this account (a user namespace)',
                aboveUnconfinedMs: t.medianMs - base.medianMs,
                pairedDifferenceMedianMs: timingOf(paired).medianMs,
                vsUnconfined: t.medianMs / base.medianMs,
              }),
        },
      };
    });
    ctx.log(
      `confinement: ${rounds} rounds, ${PROGRAM} unconfined ${base.medianMs.toFixed(1)} ms, confined ${rows
        .slice(1)
        .map((r) => `(network ${r.detail!.network}) ${r.medianMs.toFixed(1)} ms`)
        .join(', ')}`,
    );
    return rows;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * The scenario: the process starts, then the quickstart's stages through a Host each way. Skipped
 * (no rows, a note saying why) where no sandbox can be started.
 */
export async function runConfinementBench(
  ctx: BenchContext & { rounds?: number; stageRounds?: number },
): Promise<{ rows: BenchRow[]; note?: string }> {
  const probe = probeSandbox();
  if (!probe.ok) return { rows: [], note: `confinement skipped: ${probe.missing}: ${probe.detail}` };
  const starts = await timeProcessStarts(ctx);
  const stages = await runQuickstartStages({
    ...ctx,
    rounds: ctx.stageRounds ?? (ctx.quick ? STAGE_ROUNDS.quick : STAGE_ROUNDS.full),
  });
  return { rows: [...starts, ...stages] };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { rows, note } = await runConfinementBench({
    quick: scenarioArgs('confinement.bench').quick,
    log: (l) => console.error(l),
  });
  if (note) console.error(note);
  console.table(
    rows.map((r) => ({ name: r.name, medianMs: r.medianMs.toFixed(1), p95Ms: r.detail?.p95Ms, runs: r.iterations })),
  );
}
