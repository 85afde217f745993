// `ordivon demo --workload loop-compare`: Loop v0 against the one-shot gateway and the mature
// harnesses on the frozen workloads (compare.ts), one table, and its results file.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { emitReport, type Io } from '../../cli/cli-io.js';
import { failedExpectations } from '../demo/output.js';
import { comparisonTable, runComparison, type CompareResults } from './compare.js';
import { comparedWorkloads } from './plans.js';
import { VARIANTS, type Variant } from './variants.js';

export { runComparison, comparisonTable, costOf, type CompareResults, type TaskCost } from './compare.js';
export { VARIANTS, type Variant } from './variants.js';

/** What `--only` takes: workloads and variants (each kind absent: all of it). */
export const LOOP_COMPARE_PARTS = [...comparedWorkloads().map((w) => w.name), ...VARIANTS];

/** One expectation the comparison checks of its own rows. */
interface Expectation {
  what: string;
  held: boolean;
}

/**
 * What must hold whatever the figures: every variant completes its honest and its killed Task
 * (the Host's recovery carries every harness), admission refuses every false claim, and Loop v0
 * asks no answered turn again and runs no tool call again after the kill.
 */
export function expectationsOf(results: CompareResults): Expectation[] {
  return results.rows.flatMap((r) => {
    const at = `${r.workload}/${r.variant}`;
    return [
      { what: `${at}: the honest Task completed`, held: r.honest.completed },
      { what: `${at}: the killed Task completed when run again`, held: r.killed.completed },
      { what: `${at}: the false claim was refused`, held: !r.false.completed },
      ...(r.variant === 'loop'
        ? [
            {
              what: `${at}: nothing asked or run again after the kill`,
              held: r.again.turns === 0 && r.again.toolCalls === 0,
            },
          ]
        : []),
    ];
  });
}

/** The comparison as `ordivon demo` runs it: the table on stdout, the results file in the state root. */
export async function loopCompareDemo(
  options: { state: string; fresh: boolean; only: string[] | undefined },
  io: Io,
): Promise<number> {
  const { state } = options;
  if (options.fresh) rmSync(state, { recursive: true, force: true });
  mkdirSync(state, { recursive: true });
  const named = new Set(options.only ?? []);
  const workloads = comparedWorkloads()
    .map((w) => w.name)
    .filter((w) => named.has(w));
  const variants = VARIANTS.filter((v: Variant) => named.has(v));
  io.err(
    `ordivon demo: Loop v0 against the one-shot gateway, the real codex app-server and the real opencode acp on ${state}; models are scripted on loopback`,
  );
  const results = await runComparison({
    dir: state,
    ...(workloads.length > 0 ? { workloads } : {}),
    ...(variants.length > 0 ? { variants } : {}),
    log: (line) => io.err(line),
  });
  const file = join(state, `loop-compare-${results.date.slice(0, 19).replace(/:/g, '-')}Z.json`);
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  const failed = expectationsOf(results).filter((e) => !e.held);
  return emitReport(
    io,
    { state, ok: failed.length === 0, failed, results, resultsFile: file },
    () => `${comparisonTable(results)}\nresults: ${file}`,
    failedExpectations(failed),
  );
}
