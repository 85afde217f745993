import type { CliErrorCode } from '../../cli/cli-io.js';
import type { TaskRun } from '../../views/index.js';
import type { Expectation, ScenarioReport } from './checks.js';
import type { UncheckedExpectation } from './cross-checks.js';

const short = (digest: string | null | undefined) => (digest ? `${digest.slice(0, 19)}…` : '-');

function tokens(run: TaskRun): string {
  const t = run.tokens;
  if (!t) return '-';
  return t.input !== null && t.output !== null ? `${t.input} in/${t.output} out` : `${t.total ?? '-'} used`;
}

/** Where the run's canonical result came from: only artifacts the Host validated ever count. */
function resultFrom(run: TaskRun): string {
  const kept = Object.keys(run.evidence);
  if (kept.length > 0) return `artifact ${kept.join(', ')}`;
  const refused = Object.keys(run.refused);
  return refused.length > 0 ? `none (${refused.join(', ')} refused)` : 'none';
}

/** Lays out rows as aligned columns under a header. */
export function columns(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

type RunCells = Pick<TaskRun, 'generation' | 'harness' | 'provider' | 'purpose'>;

/** One row per provider run of each report: the run, its harness and purpose, then `more(run)`. */
export function runRows<R extends RunCells>(
  reports: ReadonlyArray<{ name: string; runs: readonly R[] }>,
  more: (run: R) => string[],
): string[][] {
  return reports.flatMap((r) =>
    r.runs.map((run) => [
      `${r.name} g${run.generation}`,
      `${run.harness} (${run.provider})`,
      run.purpose,
      ...more(run),
    ]),
  );
}

/**
 * The demo's human report: one row per provider run, one line per fault, then the verdict (and
 * the cross-scenario expectations a subset left unchecked).
 */
export function demoText(
  reports: ScenarioReport[],
  failed: Expectation[],
  state: string,
  unchecked: UncheckedExpectation[] = [],
): string {
  const rows = runRows(reports, (run) => [
    String(run.messages),
    `${run.toolItemsCompleted}/${run.toolItemsStarted}`,
    tokens(run),
    resultFrom(run),
    run.finalText,
    short(run.sourceDigest),
  ]);
  const lines = [
    '',
    ...columns(
      [
        'run',
        'harness (provider)',
        'purpose',
        'messages',
        'tool items',
        'tokens',
        'canonical result from',
        'final text',
        'source digest',
      ],
      rows,
    ),
    '',
    ...reports.map((r) => {
      const end = r.outcome
        ? `completed, outcome ${short(r.outcome.digest)} (g${r.outcome.generation}, source ${short(r.outcome.sourceDigest)})`
        : `${r.state}, no outcome`;
      const counters = Object.entries(r.counters).map(([k, v]) => `${k} ${v}`);
      return `${r.name.padEnd(14)} ${end}${counters.length ? `; ${counters.join('; ')}` : ''}`;
    }),
    '',
    "The canonical result of every run is what its validated artifacts say; the provider's final text is recorded",
    'as an observation only ("structured" = a JSON object, "text" = prose, "none" = no final text).',
    `Inspect any Task: ordivon show TASK_ID --events --state ${state}`,
    ...reports.map((r) => `  ${r.name.padEnd(14)} ${r.taskId}`),
    '',
    failed.length === 0
      ? `all ${reports.reduce((n, r) => n + r.expectations.length, 0)} expectations held`
      : failed.map((f) => `EXPECTATION FAILED: ${f.scenario}: ${f.what} (observed ${f.observed})`).join('\n'),
    ...unchecked.map(
      (u) => `not checked: ${u.what} (compares ${u.compares.join(', ')}; ${u.missing.join(', ')} not run)`,
    ),
  ];
  return lines.join('\n');
}

/** A demo whose expectations did not all hold is `demo_failed`, naming each that did not (undefined: all held). */
export function failedExpectations(
  failed: ReadonlyArray<{ what: string }>,
): { code: CliErrorCode; message: string } | undefined {
  if (failed.length === 0) return undefined;
  return {
    code: 'demo_failed',
    message: `${failed.length} expectation(s) did not hold: ${failed.map((e) => e.what).join('; ')}`,
  };
}
