import type { BenchRow, Headline } from './results-model.js';

/**
 * Issue 48's goals, judged from the peers scenario's rows of one run (bench/peers/peers.bench.ts):
 * the Host on LMDB against the best judged peer (Restate, DBOS, LangGraph with sync durability;
 * LangGraph's defaults are reported, never judged against), and the Host on PostgreSQL against DBOS.
 *
 * - (a) step latency, one Task: ≥ 2× the best peer (p50 and p99 each ≤ 0.5× the best's);
 * - (b) steps per second, 256 Tasks: ≥ 2× the best peer;
 * - (c) kill → every in-flight Task stepping again: ≤ 0.5× the best peer's time;
 * - (d) steps run twice after a kill mid-step: 0, whatever the peers show;
 * - (e) resident bytes per idle Task and bytes on disk per step: ≤ the best peer's;
 * - (f) the Host on PostgreSQL ≥ DBOS on (a) and (b).
 */
export const PEER_GOALS = {
  speedup: 2,
  recovery: 0.5,
} as const;

interface Measure {
  system: string;
  judged: boolean;
  value: number;
}

const JUDGED = new Set(['restate', 'dbos', 'langgraph-sync']);
const HOST = 'host-lmdb';
const HOST_PG = 'host-postgres';

function measures(rows: BenchRow[], measure: string, field: string): Measure[] {
  return rows
    .filter((r) => r.scenario === 'peers' && r.detail?.['measure'] === measure)
    .map((r) => {
      const system = String(r.detail!['system']);
      return { system, judged: JUDGED.has(system), value: Number(r.detail![field]) };
    })
    .filter((m) => Number.isFinite(m.value));
}

const fmt = (v: number, unit: string) =>
  unit === 'B' ? `${Math.round(v).toLocaleString('en-US')} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${unit}`;

/**
 * One goal: the Host's value against the best judged peer's (lowest when `lower`), as a ratio
 * `limit` bounds. Pushed only when the Host and at least one judged peer were measured.
 */
function versusBest(
  out: Headline[],
  all: Measure[],
  o: { key: string; what: string; unit: string; lower: boolean; limit: number; host?: string; peers?: string[] },
): void {
  const host = all.find((m) => m.system === (o.host ?? HOST));
  const peers = all.filter((m) => (o.peers ? o.peers.includes(m.system) : m.judged));
  if (!host || peers.length === 0) return;
  const best = peers.reduce((a, b) => ((o.lower ? b.value < a.value : b.value > a.value) ? b : a));
  // The Host's value as a multiple of the best's. A best of 0 or less (an idle Task that costs a
  // peer no memory it can measure) leaves only "no more than it": judged on the values themselves.
  const ratio = best.value > 0 ? host.value / best.value : Number.POSITIVE_INFINITY;
  const met =
    best.value > 0
      ? o.lower
        ? ratio <= o.limit
        : ratio >= o.limit
      : o.lower
        ? host.value <= best.value
        : host.value >= best.value;
  const goal = o.lower ? `≤ ${o.limit}× ${best.system}` : `≥ ${o.limit}× ${best.system}`;
  const others = peers
    .filter((p) => p !== best)
    .map((p) => `${p.system} ${fmt(p.value, o.unit)}`)
    .join(', ');
  out.push({
    key: o.key,
    value: ratio,
    goal,
    met,
    text: `${o.what}: ${host.system} ${fmt(host.value, o.unit)} vs the best peer ${best.system} ${fmt(best.value, o.unit)} = ${Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : 'n/a'}${others ? ` (${others})` : ''}; goal ${goal.replace(best.system, 'the best peer')}`,
  });
}

export function peersFigures(rows: BenchRow[], out: Headline[]): void {
  const p50 = measures(rows, 'latency', 'p50Ms');
  const p99 = measures(rows, 'latency', 'p99Ms');
  const rate = measures(rows, 'throughput', 'stepsPerSecond');
  const recovery = measures(rows, 'recovery', 'allInFlightSteppingMs');
  const memory = measures(rows, 'memory', 'bytesPerIdleTask');
  const disk = measures(rows, 'throughput', 'diskBytesPerStep');
  const inv = 1 / PEER_GOALS.speedup;
  versusBest(out, p50, {
    key: 'peers_a_p50',
    what: '(a) step latency p50, one Task',
    unit: 'ms',
    lower: true,
    limit: inv,
  });
  versusBest(out, p99, {
    key: 'peers_a_p99',
    what: '(a) step latency p99, one Task',
    unit: 'ms',
    lower: true,
    limit: inv,
  });
  versusBest(out, rate, {
    key: 'peers_b_rate',
    what: '(b) steps per second, many Tasks at once',
    unit: 'steps/s',
    lower: false,
    limit: PEER_GOALS.speedup,
  });
  versusBest(out, recovery, {
    key: 'peers_c_recovery',
    what: '(c) SIGKILL → every in-flight Task stepping again',
    unit: 'ms',
    lower: true,
    limit: PEER_GOALS.recovery,
  });
  const dups = rows.filter(
    (r) => r.scenario === 'peers' && String(r.detail?.['measure'] ?? '').startsWith('duplicates'),
  );
  const hostDups = dups.filter((r) => r.detail!['system'] === HOST);
  if (hostDups.length > 0) {
    const n = hostDups.reduce((sum, r) => sum + Number(r.detail!['duplicateSteps']), 0);
    const seen = dups
      .filter((r) => r.detail!['system'] !== HOST)
      .map(
        (r) =>
          `${String(r.detail!['system'])} (${String(r.detail!['measure']).slice(11)} killed) ${String(r.detail!['duplicateSteps'])}`,
      )
      .join(', ');
    out.push({
      key: 'peers_d_duplicates',
      value: n,
      goal: '0',
      met: n === 0,
      text: `(d) steps run twice after a SIGKILL mid-step: ${HOST} ${n}${seen ? `; ${seen}` : ''}; goal 0`,
    });
  }
  versusBest(out, memory, {
    key: 'peers_e_memory',
    what: '(e) resident memory per idle Task',
    unit: 'B',
    lower: true,
    limit: 1,
  });
  versusBest(out, disk, { key: 'peers_e_disk', what: '(e) bytes on disk per step', unit: 'B', lower: true, limit: 1 });
  versusBest(out, p50, {
    key: 'peers_f_p50',
    what: '(f) step latency p50, the Host on PostgreSQL vs DBOS',
    unit: 'ms',
    lower: true,
    limit: 1,
    host: HOST_PG,
    peers: ['dbos'],
  });
  versusBest(out, rate, {
    key: 'peers_f_rate',
    what: '(f) steps per second, the Host on PostgreSQL vs DBOS',
    unit: 'steps/s',
    lower: false,
    limit: 1,
    host: HOST_PG,
    peers: ['dbos'],
  });
}
