import { resolve } from 'node:path';
import { CliError, EXIT, cliErrorOf, emit } from '../cli/cli-io.js';
import { booleanFlag, command, stringFlag } from '../cli/command.js';
import { SCENARIOS } from './scenarios.js';

/** What `ordivon bench` runs without `--only`: the recovery benchmarks and the CLI's startup. */
export const BENCH_DEFAULT_ONLY = ['recovery', 'floor', 'peer', 'startup'] as const;

/** Where the results go without `--out`: ./ordivon-bench in the current directory. */
export const BENCH_DEFAULT_OUT = 'ordivon-bench';

const SIZE = /^([1-9][0-9]{0,7})x([1-9][0-9]{0,7})$/;

/**
 * `ordivon bench [--quick] [--only S,…] [--sizes TASKSxEVENTS,…] [--no-baseline] [--out DIR] [--state DIR]`:
 * the benchmark suite of `npm run bench` from the installed package (suite.ts): the same
 * results file and SVG. With `--state DIR` the recovery and floor scenarios time a copy of that
 * state root (taken as `ordivon backup` takes one; the root itself is only read). Scenarios that
 * need a package the install lacks are skipped, with the reason in the output and in the file.
 */
export const bench = command({
  name: 'bench',
  summary: 'run the recovery and startup benchmarks; write the results file and SVG',
  details: [
    `Runs ${BENCH_DEFAULT_ONLY.join(',')} unless --only says otherwise, on generated histories (cached in`,
    'ORDIVON_BENCH_CACHE, else <tmpdir>/ordivon-bench-cache), and writes <out>/<date>.json and <out>/recovery-<date>.svg.',
    'With --state DIR the recovery and floor scenarios time a copy of that state root, taken read-only into the',
    'cache directory and removed afterwards; ORDIVON_STATE and ./.ordivon are not used by bench.',
    'A scenario needing a package this install lacks (better-sqlite3, @temporalio/*, the tests) is skipped with the reason.',
  ],
  flags: {
    quick: booleanFlag('small sizes and 5 startup runs instead of 15: well under a minute'),
    only: stringFlag(
      'S,…',
      `the scenarios, comma-separated, of ${SCENARIOS.join(', ')} (default ${BENCH_DEFAULT_ONLY.join(',')})`,
      (z) =>
        z
          .string()
          .transform((text) => text.split(','))
          .pipe(z.array(z.enum(SCENARIOS)).min(1))
          .optional(),
    ),
    sizes: stringFlag(
      'TASKSxEVENTS,…',
      'the generated histories of recovery, floor and peer: Tasks × events per Task (default 100x100,1000x100,10000x100; --quick 100x100)',
      (z) =>
        z
          .string()
          .transform((text) => text.split(','))
          .pipe(z.array(z.string().regex(SIZE, 'expected TASKSxEVENTS, e.g. 1000x100')).min(1))
          .transform((parts) =>
            parts.map((part) => {
              const [, tasks, events] = SIZE.exec(part)!;
              return { tasks: Number(tasks), events: Number(events) };
            }),
          )
          .optional(),
    ),
    'no-baseline': booleanFlag('skip the core commit\'s rebuildAll (the recovery scenario\'s "before" row)'),
    out: stringFlag('DIR', `where the results file and the SVG go (default ./${BENCH_DEFAULT_OUT})`, (z) =>
      z.string().min(1, 'must not be empty').optional(),
    ),
  },
  async run(values, io) {
    const { runSuite } = await import('./suite.js');
    const { cacheDirectory } = await import('./generate.js');
    const { copyStateRoot, removeStateCopy } = await import('./state-copy.js');
    const { StoreError, resolveStateRoot } = await import('../store/index.js');
    const log = (line: string) => io.err(line);
    let history: Awaited<ReturnType<typeof copyStateRoot>> | undefined;
    if (values.state !== undefined) {
      const source = resolveStateRoot(values.state);
      log(`bench: copying ${source} (read-only) …`);
      try {
        history = await copyStateRoot(source, cacheDirectory());
      } catch (error) {
        if (error instanceof StoreError) throw cliErrorOf(error);
        throw error;
      }
      if (history.events === 0) {
        removeStateCopy(history);
        throw new CliError('usage', `--state: ${source} holds no events: there is no history to time`, {
          exit: EXIT.usage,
          path: '--state',
        });
      }
    }
    try {
      const run = await runSuite({
        quick: values.quick,
        only: values.only ?? BENCH_DEFAULT_ONLY,
        ...(values.sizes ? { sizes: values.sizes } : {}),
        baseline: !values['no-baseline'],
        outDir: resolve(values.out ?? BENCH_DEFAULT_OUT),
        ...(history ? { history } : {}),
        log,
      });
      emit(io, { ...run.results, files: { results: run.jsonPath, svg: run.svgPath ?? null } }, () => run.report);
      return EXIT.ok;
    } finally {
      if (history) removeStateCopy(history);
    }
  },
});
