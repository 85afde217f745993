import type { BenchRow, Headline } from './results-model.js';

/** The process-start variants of the confinement scenario: unconfined, confined with network none, with network host. */
export type StartVariant = 'unconfined' | 'none' | 'host';
export type StageName = 'investigate' | 'fix';

export const CONFINEMENT_START: Record<StartVariant, string> = {
  unconfined: 'confinement: /bin/true through spawnGroup, spawn → exit, unconfined',
  none: 'confinement: /bin/true through spawnGroup, spawn → exit, confined (bwrap), network none',
  host: 'confinement: /bin/true through spawnGroup, spawn → exit, confined (bwrap), network host',
};

/** The quickstart stage rows: `investigate` to its run observed, `fix` to its verification recorded. */
export const confinementStage = (stage: StageName, mode: 'bwrap' | 'none') =>
  `confinement: quickstart stage ${stage}, assignment → ${stage === 'investigate' ? 'run observed' : 'verification recorded'}, confinement ${mode}`;

/** Issue 43's goal: a confined start at most this many milliseconds above an unconfined one (medians). */
export const CONFINED_START_BUDGET_MS = 50;

const ms = (v: number) => `${v.toFixed(1)} ms`;

/** The agent's own process in a stage row's detail (spawn → exit, as its driver timed it), bwrap against none. */
function agentRuns(bwrap: BenchRow, none: BenchRow): string {
  const [b, n] = [bwrap.detail?.agentRunMedianMs, none.detail?.agentRunMedianMs];
  if (typeof b !== 'number' || typeof n !== 'number') return '';
  return `; the agent's process alone (spawn → exit, its receipt) ${ms(b)} vs ${ms(n)}, ${b >= n ? '+' : ''}${ms(b - n)}`;
}
const x = (r: number) => `${r.toFixed(2)}×`;

/**
 * The confined starts against the unconfined one, judged by issue 43's goal (≤ 50 ms above it,
 * medians), and each quickstart stage with bwrap against none (reported, no goal).
 */
export function confinementFigures(rows: BenchRow[], out: Headline[]): void {
  const find = (name: string) => rows.find((r) => r.scenario === 'confinement' && r.name === name);
  const base = find(CONFINEMENT_START.unconfined);
  if (base)
    for (const network of ['none', 'host'] as const) {
      const row = find(CONFINEMENT_START[network]);
      if (!row) continue;
      const above = row.medianMs - base.medianMs;
      const p95 = (r: BenchRow) => Number(r.detail?.p95Ms);
      out.push({
        key: `confinement_start_${network}_above`,
        value: above,
        goal: `≤ ${CONFINED_START_BUDGET_MS} ms above`,
        met: above <= CONFINED_START_BUDGET_MS,
        text: `confined start (bwrap, network ${network}) of /bin/true ${ms(row.medianMs)} (p95 ${ms(p95(row))}) vs unconfined ${ms(base.medianMs)} (p95 ${ms(p95(base))}): ${above >= 0 ? '+' : ''}${ms(above)}, ${x(row.medianMs / base.medianMs)} (medians of ${row.iterations} starts each, in turn); goal ≤ ${CONFINED_START_BUDGET_MS} ms above`,
      });
    }
  for (const stage of ['investigate', 'fix'] as const) {
    const none = find(confinementStage(stage, 'none'));
    const bwrap = find(confinementStage(stage, 'bwrap'));
    if (!none || !bwrap) continue;
    const r = bwrap.medianMs / none.medianMs;
    out.push({
      key: `confinement_stage_${stage}`,
      value: r,
      text: `quickstart stage ${stage} (assignment → ${stage === 'investigate' ? 'run observed' : 'verification recorded'}) through a Host, confinement bwrap ${ms(bwrap.medianMs)} vs none ${ms(none.medianMs)} = ${x(r)}, ${bwrap.medianMs >= none.medianMs ? '+' : ''}${ms(bwrap.medianMs - none.medianMs)} (medians of ${bwrap.iterations} Tasks each, interleaved)${agentRuns(bwrap, none)}`,
    });
  }
}
