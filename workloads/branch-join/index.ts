// `ordivon demo --workload branch-join`: branch and join on the Host (docs/branch-and-join.md),
// driven as a user would (run.ts), every expectation read back from the durable state (checks.ts).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError, emitReport, type Io } from '../../cli/cli-io.js';
import { failedExpectations } from '../demo/output.js';
import { readBack, type BranchJoinExpectation } from './checks.js';
import { driveBranchJoin } from './run.js';
import { BRANCH_JOIN_PARTS, type BranchJoinPart } from './specs.js';

export { BRANCH_JOIN_PARTS, type BranchJoinPart } from './specs.js';

/** How long the demo may take before it fails as stuck (a healthy run takes seconds). */
const DEADLINE_MS = 300_000;

/** The report's text: one line per expectation, ✓ or ✗, then the verdict. */
export function branchJoinText(
  expectations: BranchJoinExpectation[],
  tasks: Record<string, string>,
  state: string,
): string {
  const failed = expectations.filter((e) => !e.held);
  return [
    '',
    ...expectations.map(
      (e) => `${e.held ? '✓' : '✗'} ${e.part}: ${e.what}${e.held ? '' : ` (observed ${e.observed})`}`,
    ),
    '',
    `Inspect any Task: ordivon show TASK_ID --events --state ${state}`,
    ...Object.entries(tasks).map(([part, taskId]) => `  ${part.padEnd(14)} ${taskId}`),
    '',
    failed.length === 0
      ? `all ${expectations.length} expectations held`
      : `${failed.length} of ${expectations.length} expectations did not hold`,
  ].join('\n');
}

/** The demo as `ordivon demo` runs it: both parts on one Host, then the read-back. */
export async function branchJoinDemo(
  options: { state: string; fresh: boolean; only: BranchJoinPart[] | undefined },
  io: Io,
): Promise<number> {
  const { state } = options;
  if (options.fresh) rmSync(state, { recursive: true, force: true });
  mkdirSync(state, { recursive: true });
  const parts = options.only ?? [...BRANCH_JOIN_PARTS];
  io.err(
    `ordivon demo: branch and join on ${state}; parts ${parts.join(', ')}; the agents are scripted command harnesses (real processes)`,
  );
  // Task ids of their own per run: the same state root may be run again without --fresh.
  const stamp = Date.now().toString(36);
  // The agents' kit lives outside the state root, which no confined process may see.
  const dir = mkdtempSync(join(tmpdir(), 'ordivon-branch-join-'));
  let tasks;
  let deadline: NodeJS.Timeout | undefined;
  try {
    // A Task that never reaches the state awaited would leave nothing for the event loop to do, and
    // the process would exit 0 with nothing said: the demo fails instead, after a deadline no
    // healthy run comes near (it orders nothing: every wait is on a commit or a file).
    const late = new Promise<never>((_, reject) => {
      deadline = setTimeout(
        () => reject(new CliError('demo_failed', `the demo did not end within ${DEADLINE_MS / 1000} s`)),
        DEADLINE_MS,
      );
    });
    tasks = await Promise.race([driveBranchJoin({ state, dir, stamp, parts, say: (line) => io.err(line) }), late]);
  } finally {
    clearTimeout(deadline);
    rmSync(dir, { recursive: true, force: true });
  }
  const expectations = await readBack(state, tasks);
  const failed = expectations.filter((e) => !e.held);
  return emitReport(
    io,
    { state, ok: failed.length === 0, tasks, expectations, failed },
    () => branchJoinText(expectations, tasks, state),
    failedExpectations(failed.map((e) => ({ what: `${e.part}: ${e.what}` }))),
  );
}
