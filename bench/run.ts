// The benchmark runner (`npm run bench [-- --quick]`): runs every scenario in one process, prints
// one table and the headline ratios against issue 33's goals (and issue 29's startup goal, issue
// 43's confined start, issue 46's loop cancel), each beside the floor it is judged against (measured in the same run),
// and writes bench/results/<date>.json and, when a recovery, floor or peer scenario ran,
// bench/results/recovery-<date>.svg (recovery time against history length for verified recovery,
// the floors and the SQLite peer). The work is bench/suite.ts's, which `ordivon bench` runs too.
//
// Options: --quick (small sizes, < 2 minutes), --only recovery,floor,peer,checkpoint,disk,
// admission,temporal,reconciliation,cluster,startup,confinement,loop-cancel, --sizes 100x100,1000x100,
// --no-baseline (skip the core commit's rebuildAll), --out DIR. Generated histories are cached
// (see generate.ts).
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { Size } from './report/results-model.js';
import { SCENARIOS, runSuite } from './suite.js';
import { parseScriptArgs, scriptArgsOrExit } from '../cli/cli-io.js';

export const USAGE = `usage: npm run bench -- [--quick] [--only ${SCENARIOS.join(',')}] [--sizes TASKSxEVENTS,...] [--no-baseline] [--out DIR]`;

const SIZE = /^([1-9][0-9]{0,7})x([1-9][0-9]{0,7})$/;

/** `--only a,b`: scenario names, at least one. */
export const OnlyScenarios = z
  .string()
  .transform((text) => text.split(','))
  .pipe(z.array(z.enum(SCENARIOS)).min(1));

/** `--sizes 100x100,1000x100`: Tasks × events per Task, at least one. */
export const SizeList = z
  .string()
  .transform((text) => text.split(','))
  .pipe(z.array(z.string().regex(SIZE, 'expected TASKSxEVENTS, e.g. 1000x100')).min(1))
  .transform((parts): Size[] =>
    parts.map((part) => {
      const [, tasks, events] = SIZE.exec(part)!;
      return { tasks: Number(tasks), events: Number(events) };
    }),
  );

const BenchArgs = z.object({
  quick: z.boolean().default(false),
  only: z.string().default(SCENARIOS.join(',')).pipe(OnlyScenarios),
  sizes: SizeList.optional(),
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
  const run = await runSuite({
    quick: args.quick,
    only: args.only,
    ...(args.sizes ? { sizes: args.sizes } : {}),
    baseline: !args['no-baseline'],
    outDir: args.out ?? fileURLToPath(new URL('../../bench/results/', import.meta.url)),
    log: (line) => console.error(line),
  });
  console.log(run.report);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
