import type { BenchRow } from './results-model.js';

/** One headline figure: what was measured, the ratio, and whether issue 7's goal was met (undefined: no goal). */
export interface Headline {
  key: string;
  text: string;
  value: number;
  goal?: string;
  met?: boolean;
}

const VERIFIED = 'verified recovery: supervisor boot → serving (full checks)';
const BEFORE = 'before: rebuildAll of the core commit (one thread)';
const FLOOR_EVENTS = 'floor: open + scan + decode events';
const FLOOR_ALL = 'floor: open + scan + decode everything recovery reads';
const PEER = 'peer: SQLite verified recovery → live Tasks, worker threads';
const PEER_ONE = 'peer: SQLite verified recovery → live Tasks, one thread';
const ONE_THREAD = 'rebuild only, one thread (rebuildAll)';
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const x = (r: number) => `${r.toFixed(2)}×`;

/** The ratios issue 7 asks for, computed from one run's rows (only those whose inputs were measured). */
export function headline(rows: BenchRow[]): Headline[] {
  const out: Headline[] = [];
  const find = (scenario: BenchRow['scenario'], name: string, events?: number) =>
    rows.find((r) => r.scenario === scenario && r.name === name && (events === undefined || r.events === events));
  const largest = Math.max(
    0,
    ...rows.filter((r) => r.scenario === 'recovery' && r.name === VERIFIED).map((r) => r.events ?? 0),
  );
  const verified = find('recovery', VERIFIED, largest);
  // The recovery goals are stated for 1,000,000 events: smaller runs (--quick) are reported, not judged.
  const judged = largest >= 1_000_000;
  const goal = (met: boolean) => (judged ? met : undefined);
  if (verified) {
    const n = largest.toLocaleString('en-US');
    const floorAll = find('floor', FLOOR_ALL, largest);
    const floorEvents = find('floor', FLOOR_EVENTS, largest);
    if (floorAll) {
      const r = verified.medianMs / floorAll.medianMs;
      out.push({
        key: 'verified_vs_floor_all',
        value: r,
        goal: '≤ 3×',
        met: goal(r <= 3),
        text: `verified recovery of ${n} events ${s(verified.medianMs)} = ${x(r)} the floor of reading the same bytes (${s(floorAll.medianMs)}: events, objects, blobs, heads, projections); goal ≤ 3×`,
      });
    }
    if (floorEvents) {
      const r = verified.medianMs / floorEvents.medianMs;
      out.push({
        key: 'verified_vs_floor_events',
        value: r,
        goal: '≤ 3×',
        met: goal(r <= 3),
        text: `verified recovery of ${n} events = ${x(r)} the events-only scan-and-decode floor (${s(floorEvents.medianMs)}); goal ≤ 3×`,
      });
    }
    const peer = find('peer', PEER, largest);
    if (peer) {
      const r = peer.medianMs / verified.medianMs;
      out.push({
        key: 'peer_vs_verified',
        value: r,
        goal: '≥ 2×',
        met: goal(r >= 2),
        text: `SQLite peer doing the same verified work (worker threads too) ${s(peer.medianMs)} = ${x(r)} slower than LMDB; goal ≥ 2×`,
      });
    }
    const peerOne = find('peer', PEER_ONE, largest);
    const oneThread = find('recovery', ONE_THREAD, largest);
    if (peerOne && oneThread) {
      out.push({
        key: 'peer_vs_lmdb_one_thread',
        value: peerOne.medianMs / oneThread.medianMs,
        text: `one thread each: SQLite peer ${s(peerOne.medianMs)} vs LMDB rebuild ${s(oneThread.medianMs)} = ${x(peerOne.medianMs / oneThread.medianMs)}`,
      });
    }
    const before = find('recovery', BEFORE, largest);
    if (before)
      out.push({
        key: 'before_vs_after',
        value: before.medianMs / verified.medianMs,
        text: `before/after: the core commit's rebuildAll took ${s(before.medianMs)} for the same ${n} events, ${x(before.medianMs / verified.medianMs)} the new boot`,
      });
  }
  const checkpoints = rows.filter((r) => r.scenario === 'checkpoint' && r.name.includes('checkpoints at head'));
  const shortHistory = checkpoints.find((r) => r.events! / r.tasks! === 10);
  const longHistory = checkpoints.find((r) => r.events! / r.tasks! === 100);
  if (shortHistory) {
    out.push({
      key: 'checkpoint_start',
      value: shortHistory.medianMs,
      goal: '< 0.5 s for 10,000 Tasks',
      met: shortHistory.tasks! >= 10_000 ? shortHistory.medianMs < 500 : undefined,
      text: `checkpointed start of ${shortHistory.tasks!.toLocaleString('en-US')} Tasks: ${s(shortHistory.medianMs)}; goal < 0.5 s for 10,000 Tasks`,
    });
  }
  if (shortHistory && longHistory) {
    const r = longHistory.medianMs / shortHistory.medianMs;
    out.push({
      key: 'checkpoint_flat',
      value: r,
      goal: 'flat (≤ 1.5×)',
      met: shortHistory.tasks! >= 10_000 ? r <= 1.5 : undefined,
      text: `checkpointed start with 10× the history: ${s(longHistory.medianMs)} = ${x(r)} (goal: flat)`,
    });
  }
  const admission = (name: string) =>
    rows.find((r) => r.scenario === 'admission' && r.tasks === 256 && r.name.includes(name));
  const sup = admission('Supervisor.send');
  const kernel = admission('kernel (TaskActor), LMDB');
  const peerAdmission = admission('SQLite peer');
  if (sup)
    out.push({
      key: 'admission_256',
      value: sup.rate!,
      goal: '≥ 10,000/s',
      met: sup.rate! >= 10_000,
      text: `admission with 256 active Tasks, durable: ${Math.round(sup.rate!).toLocaleString('en-US')} transitions/s through the supervisor; goal ≥ 10,000/s`,
    });
  if (kernel && peerAdmission) {
    const r = kernel.rate! / peerAdmission.rate!;
    out.push({
      key: 'admission_vs_peer',
      value: r,
      goal: '≥ 1×',
      met: r >= 1,
      text: `same kernel, 256 Tasks: LMDB ${Math.round(kernel.rate!).toLocaleString('en-US')}/s vs SQLite peer ${Math.round(peerAdmission.rate!).toLocaleString('en-US')}/s = ${x(r)}; goal ≥ 1×`,
    });
  }
  const hits = rows.filter((r) => r.scenario === 'reconciliation' && r.name.includes('hit'));
  const small = hits.find((r) => r.detail?.jobs === 1_000);
  const large = hits.find((r) => r.detail?.jobs === 100_000);
  if (small && large) {
    const r = large.medianMs / small.medianMs;
    out.push({
      key: 'reconciliation_flat',
      value: r,
      goal: 'flat (≤ 1.5×)',
      met: r <= 1.5,
      text: `reconciliation lookup (findJobs hit) 100,000 vs 1,000 jobs: ${(large.medianMs * 1000).toFixed(1)} µs vs ${(small.medianMs * 1000).toFixed(1)} µs = ${x(r)} (goal: flat)`,
    });
  }
  return out;
}
