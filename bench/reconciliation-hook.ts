import { z } from 'zod';
import { describeIssues } from '../base/index.js';
import type { BenchContext, BenchRow } from './report/results-model.js';

// HOOK (reconciliation scenario): bench/find-jobs.bench.ts belongs to the Runtime's engineer.
// The runner calls its exported `runFindJobsBench({ quick })` when the module exists and exports
// it; otherwise the scenario is reported as skipped. It is imported by a computed specifier so
// that this runner builds whether or not that file is present.
const FIND_JOBS_MODULE = './find-jobs.bench.js';

const FindJobsRows = z.array(
  z.object({
    name: z.string(),
    jobs: z.number().int().positive(),
    meanUs: z.number().nonnegative(),
    p99Us: z.number().nonnegative(),
    samples: z.number().int().nonnegative(),
  }),
);

/** Runs the find-jobs scenario if available; `note` says why it was skipped otherwise. */
export async function runReconciliationHook(ctx: BenchContext): Promise<{ rows: BenchRow[]; note?: string }> {
  let mod: { runFindJobsBench?: unknown };
  try {
    mod = (await import(FIND_JOBS_MODULE)) as { runFindJobsBench?: unknown };
  } catch (error) {
    return {
      rows: [],
      note: `reconciliation skipped: ${FIND_JOBS_MODULE} cannot be loaded (${(error as Error).message.split('\n')[0]})`,
    };
  }
  if (typeof mod.runFindJobsBench !== 'function')
    return { rows: [], note: 'reconciliation skipped: find-jobs.bench.js exports no runFindJobsBench' };
  const parsed = FindJobsRows.safeParse(
    await (mod.runFindJobsBench as (o: { quick: boolean }) => Promise<unknown>)({ quick: ctx.quick }),
  );
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
