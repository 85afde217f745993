// Scenario: startup — how long the CLI takes to answer, as a user meets it: `ordivon --help` and
// `ordivon list` (against a small generated state root) as child processes, each beside
// `node -e 0`, the floor of any Node program on the same machine. The three commands are run in
// turn, round after round, so a change in the machine's load touches all three alike; medians.
//
//   node dist/bench/startup.bench.js [--quick]
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateRoot } from './generate.js';
import { STARTUP_HELP, STARTUP_LIST, STARTUP_LIST_FLOOR, STARTUP_NODE } from './report/headline.js';
import type { BenchContext, BenchRow } from './report/results-model.js';
import { scenarioArgs, type Timing } from './util.js';

/** The CLI's entry, beside this file in the build (dist/bench → dist/cli), in a clone and in an installed package. */
export const CLI_ENTRY = fileURLToPath(new URL('../cli/ordivon.js', import.meta.url));

/** The smallest program that reads a state root as `list` must (list-floor.ts), beside this file. */
const LIST_FLOOR = fileURLToPath(new URL('./floors/list-floor.js', import.meta.url));

/** Timed runs of each command: 15, or 5 with --quick. */
export const STARTUP_RUNS = { full: 15, quick: 5 } as const;

/** Runs `node ...args` to its exit; resolves with the milliseconds from spawn to exit. Throws unless it exits 0. */
export function timedNode(args: readonly string[], env: NodeJS.ProcessEnv = process.env): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (result.error) throw result.error;
  if (result.status !== 0)
    throw new Error(
      `startup: node ${args.join(' ')} exited ${result.status ?? result.signal}: ${result.stderr.trim()}`,
    );
  return ms;
}

/** Median, min and max of a list of timings. */
export function timingOf(samples: readonly number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const medianMs = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { medianMs, minMs: sorted[0]!, maxMs: sorted.at(-1)!, iterations: sorted.length };
}

export async function runStartupBench(ctx: BenchContext & { runs?: number; cli?: string }): Promise<BenchRow[]> {
  const cli = ctx.cli ?? CLI_ENTRY;
  const runs = ctx.runs ?? (ctx.quick ? STARTUP_RUNS.quick : STARTUP_RUNS.full);
  const size = { tasks: 10, events: 10 };
  const { root } = await generateRoot(size);
  // The user's ORDIVON_STATE must not choose the root `list` reads: --state names it.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'ORDIVON_STATE'));
  const commands = [
    { name: STARTUP_NODE, args: ['-e', '0'] },
    { name: STARTUP_HELP, args: [cli, '--help'] },
    { name: STARTUP_LIST, args: [cli, 'list', '--state', root] },
    { name: STARTUP_LIST_FLOOR, args: [LIST_FLOOR, root] },
  ];
  // One untimed run each: the first start reads the files from disk, the ones after from the page cache.
  for (const c of commands) timedNode(c.args, env);
  const samples = commands.map(() => [] as number[]);
  for (let round = 0; round < runs; round++) commands.forEach((c, i) => samples[i]!.push(timedNode(c.args, env)));
  const floor = timingOf(samples[0]!);
  ctx.log(`startup: ${runs} runs each, node -e 0 ${floor.medianMs.toFixed(0)} ms`);
  return commands.map((c, i) => {
    const t = timingOf(samples[i]!);
    return {
      scenario: 'startup',
      name: c.name,
      ...(i >= 2 ? { tasks: size.tasks, events: size.tasks * size.events } : {}),
      ...t,
      detail: {
        command:
          i === 0
            ? 'node -e 0'
            : i === 3
              ? 'node dist/bench/list-floor.js ROOT'
              : `ordivon ${c.args.slice(1).join(' ').replace(root, 'ROOT')}`,
        vsNode: t.medianMs / floor.medianMs,
      },
    };
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runStartupBench({ quick: scenarioArgs('startup.bench').quick, log: (l) => console.error(l) });
  console.table(rows.map((r) => ({ name: r.name, medianMs: r.medianMs.toFixed(0), vsNode: r.detail?.vsNode })));
}
