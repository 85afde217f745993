import { z } from 'zod';
import { describeIssues } from '../base/index.js';
import type { BenchContext, BenchRow } from './report/results-model.js';

// The reconciliation scenario: the Runtime's findJobs timed by bench/cluster/find-jobs.bench.ts,
// loaded when the scenario runs (like every scenario) and checked at the boundary. The specifier
// is a literal, so the compiler fails on a moved file: a computed one left the scenario skipped
// once bench/ was regrouped by role.
const FindJobsRows = z.array(
  z.object({
    name: z.string(),
    jobs: z.number().int().positive(),
    meanUs: z.number().nonnegative(),
    p99Us: z.number().nonnegative(),
    samples: z.number().int().nonnegative(),
  }),
);

/** Runs the find-jobs scenario; `note` says why its rows were not taken (an unexpected shape). */
export async function runReconciliationHook(ctx: BenchContext): Promise<{ rows: BenchRow[]; note?: string }> {
  const { runFindJobsBench } = await import('./cluster/find-jobs.bench.js');
  const parsed = FindJobsRows.safeParse(await runFindJobsBench({ quick: ctx.quick }));
  if (!parsed.success)
    return {
      rows: [],
      note: `reconciliation skipped: runFindJobsBench returned rows of an unexpected shape (${describeIssues(parsed.error)})`,
    };
  return {
    rows: parsed.data.map((r) => ({
      scenario: 'reconciliation',
      name: `reconciliation: ${r.name}, ${r.jobs.toLocaleString('en-US')} jobs (findJobs by clientRequestId)`,
      medianMs: r.meanUs / 1000,
      iterations: r.samples,
      rate: 1e6 / r.meanUs,
      rateUnit: 'lookups/s',
      detail: { jobs: r.jobs, meanUs: r.meanUs, p99Us: r.p99Us, statistic: 'mean' },
    })),
  };
}
