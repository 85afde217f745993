import type { BenchRow, Headline } from './results-model.js';

/** The loop-cancel scenario's row: from the cancel's commit to the model server seeing the call's connection closed. */
export const LOOP_CANCEL = "loop cancel: task.cancel committed → the held model call's connection closed at the model";

/** Issue 46's bound: a cancel aborts an in-flight model call within this many milliseconds of its commit. */
export const LOOP_CANCEL_BOUND_MS = 1_000;

const ms = (v: number) => `${v.toFixed(1)} ms`;
const x = (r: number) => `${r.toFixed(3)}×`;

/** The slowest cancel of the run against issue 46's 1 s bound, with the median beside it. */
export function loopCancelFigures(rows: BenchRow[], out: Headline[]): void {
  const row = rows.find((r) => r.scenario === 'loop-cancel' && r.name === LOOP_CANCEL);
  if (!row) return;
  const max = row.maxMs ?? row.medianMs;
  out.push({
    key: 'loop_cancel_max_vs_bound',
    value: max / LOOP_CANCEL_BOUND_MS,
    goal: `≤ 1× (${LOOP_CANCEL_BOUND_MS} ms)`,
    met: max <= LOOP_CANCEL_BOUND_MS,
    text: `Loop v0 cancel, task.cancel committed → the held model call's connection closed: median ${ms(row.medianMs)} = ${x(row.medianMs / LOOP_CANCEL_BOUND_MS)}, max ${ms(max)} = ${x(max / LOOP_CANCEL_BOUND_MS)} the ${LOOP_CANCEL_BOUND_MS} ms bound (${row.iterations} cancels); goal every one ≤ ${LOOP_CANCEL_BOUND_MS} ms`,
  });
}
