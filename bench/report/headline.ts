import { confinementFigures } from './confinement-headline.js';
import { loopCancelFigures } from './loop-cancel-headline.js';
import { peersFigures } from './peers-headline.js';
import type { BenchRow, Headline } from './results-model.js';

export type { Headline } from './results-model.js';

export const VERIFIED = 'verified recovery: supervisor boot → serving (full checks)';
/** The default boot's row (recovery.bench.ts writes it; the name is kept here beside the others). */
export const DEFAULT_BOOT = 'default boot to serving (every event verified, tails after checkpoints replayed)';
export const XSTATE_FLOOR = 'floor: XState step alone over the same events (one actor per Task)';
const BEFORE = 'before: rebuildAll of the core commit (one thread)';
export const FLOOR_EVENTS = 'floor: open + scan + decode events';
export const FLOOR_ALL = 'floor: open + scan + decode everything recovery reads';
const PEER = 'peer: SQLite verified recovery → live Tasks, worker threads';
const PEER_ONE = 'peer: SQLite verified recovery → live Tasks, one thread';
const ONE_THREAD = 'rebuild only, one thread (rebuildAll)';
export const FDATASYNC = 'floor: fdatasync of a 200 B write';
export const PUT_256 = 'floor: LMDB durable puts, 256 concurrent writers';
export const PUT_ONE = 'floor: LMDB durable puts, one writer (await put + flushed)';
export const CHECKPOINT_START = 'checkpointed start: boot → serving, checkpoints at head';
export const CHECKPOINT_FLOOR = 'floor: open + read + JSON.parse every checkpoint';
export const TEMPORAL = 'Temporal: Worker.runReplayHistories of the same Task lifecycles';
export const TEMPORAL_OURS = 'verified boot of the same Tasks (supervisor → serving)';
export const CLUSTER_LMDB = 'cluster: one Host on LMDB (embedded), its own process';
export const clusterPostgres = (hosts: number) =>
  `cluster: ${hosts} Host${hosts === 1 ? '' : 's'} on PostgreSQL, a process each`;
export const clusterTakeover = (leaseMs: number) =>
  `cluster: takeover after SIGKILL of 1 of 3 Hosts, lease ${leaseMs / 1000} s`;
export const STARTUP_NODE = 'startup: node -e 0 (the floor of any Node program)';
export const STARTUP_HELP = 'startup: ordivon --help, a process of its own';
export const STARTUP_LIST = 'startup: ordivon list of a 10-Task state root, a process of its own';
export const STARTUP_LIST_FLOOR = "startup: list's floor (import lmdb and zod, read and parse the projections)";
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const x = (r: number) => `${r.toFixed(2)}×`;
const perS = (rate: number) => `${Math.round(rate).toLocaleString('en-US')}/s`;

/**
 * Issue 33's goals, retired by issue 48 (they sat under floors the verified boot and the single
 * main thread rule out here): their figures stay in the headline as reference rows beside their
 * floors, judged no more.
 */
export const RETIRED_GOALS = [
  'admission_1_vs_peer',
  'admission_1_fsync_times',
  'admission_256_vs_peer',
  'admission_256_vs_puts',
  'full_replay_vs_floor',
  'default_boot_vs_floor',
  'checkpoint_vs_floor_10',
  'checkpoint_flat',
  'cluster_1_vs_lmdb',
  'cluster_cpu_flat',
] as const;

const RETIRED: ReadonlySet<string> = new Set(RETIRED_GOALS);

/** A retired goal's figure: no goal, no verdict, its text saying what the goal was. */
function retire(h: Headline): Headline {
  if (!RETIRED.has(h.key) && !h.key.startsWith('checkpoint_vs_floor_')) return h;
  const { goal, met: _met, ...figure } = h;
  const text = figure.text.replace(/[;(]?\s*goal:? [^;)]*\)?$/, '').trimEnd();
  return { ...figure, text: `${text} (reference; issue 33's retired goal ${goal ?? ''})` };
}

/**
 * The headline: each figure beside its floor or its peer, computed from one run's rows (only those
 * whose inputs were measured); issue 48's goals against the real peers judged, issue 33's retired.
 */
export function headline(rows: BenchRow[]): Headline[] {
  return headlineFigures(rows).map(retire);
}

function headlineFigures(rows: BenchRow[]): Headline[] {
  const out: Headline[] = [];
  const find = (scenario: BenchRow['scenario'], name: string, events?: number) =>
    rows.find((r) => r.scenario === scenario && r.name === name && (events === undefined || r.events === events));
  admissionGoals(rows, out);
  const largest = Math.max(
    0,
    ...rows.filter((r) => r.scenario === 'recovery' && r.name === VERIFIED).map((r) => r.events ?? 0),
  );
  const verified = find('recovery', VERIFIED, largest);
  // The recovery goals are stated for 1,000,000 events: smaller runs (--quick) are reported, not judged.
  const goal = (met: boolean) => (largest >= 1_000_000 ? met : undefined);
  if (verified) {
    const n = largest.toLocaleString('en-US');
    const floorAll = find('floor', FLOOR_ALL, largest);
    if (floorAll) {
      // Each boot against the read floor of the same bytes, judged at 1M events.
      const against = (key: string, row: BenchRow | undefined, limit: number, what: string) => {
        if (!row) return;
        const r = row.medianMs / floorAll.medianMs;
        out.push({
          key,
          value: r,
          goal: `≤ ${limit}×`,
          met: goal(r <= limit),
          text: `${what} of ${n} events ${s(row.medianMs)} = ${x(r)} the read floor, reading the same bytes (${s(floorAll.medianMs)}: events, objects, blobs, heads, projections); goal ≤ ${limit}×`,
        });
      };
      against(
        'full_replay_vs_floor',
        verified,
        3.3,
        "full verified replay (recovery 'full', what doctor --full checks)",
      );
      against(
        'default_boot_vs_floor',
        find('recovery', DEFAULT_BOOT, largest),
        1.5,
        'default boot (every event verified, checkpoints at head, tails replayed)',
      );
    }
    const floorEvents = find('floor', FLOOR_EVENTS, largest);
    if (floorEvents)
      out.push({
        key: 'verified_vs_floor_events',
        value: verified.medianMs / floorEvents.medianMs,
        text: `… = ${x(verified.medianMs / floorEvents.medianMs)} the events-only scan-and-decode floor (${s(floorEvents.medianMs)})`,
      });
    const step = find('floor', XSTATE_FLOOR, largest);
    const oneThread = find('recovery', ONE_THREAD, largest);
    if (step) {
      out.push({
        key: 'verified_vs_xstate_step',
        value: verified.medianMs / step.medianMs,
        text: `… = ${x(verified.medianMs / step.medianMs)} XState's step alone over the same events on one thread (${s(step.medianMs)}; decoded events in memory, nothing else)${oneThread ? `; the one-thread rebuild ${s(oneThread.medianMs)} = ${x(oneThread.medianMs / step.medianMs)} it` : ''}`,
      });
    }
    const peer = find('peer', PEER, largest);
    if (peer)
      out.push({
        key: 'peer_vs_verified',
        value: peer.medianMs / verified.medianMs,
        text: `SQLite peer doing the same verified work (worker threads too) ${s(peer.medianMs)} = ${x(peer.medianMs / verified.medianMs)} LMDB's time`,
      });
    const peerOne = find('peer', PEER_ONE, largest);
    if (peerOne && oneThread)
      out.push({
        key: 'peer_vs_lmdb_one_thread',
        value: peerOne.medianMs / oneThread.medianMs,
        text: `one thread each: SQLite peer ${s(peerOne.medianMs)} vs LMDB rebuild ${s(oneThread.medianMs)} = ${x(peerOne.medianMs / oneThread.medianMs)}`,
      });
    const before = find('recovery', BEFORE, largest);
    if (before)
      out.push({
        key: 'before_vs_after',
        value: before.medianMs / verified.medianMs,
        text: `before/after: the core commit's rebuildAll took ${s(before.medianMs)} for the same ${n} events, ${x(before.medianMs / verified.medianMs)} the new boot`,
      });
  }
  checkpointGoals(rows, out);
  startupGoals(rows, out);
  clusterFigures(rows, out);
  confinementFigures(rows, out);
  loopCancelFigures(rows, out);
  peersFigures(rows, out);
  const temporal = rows.find((r) => r.scenario === 'temporal' && r.name === TEMPORAL);
  const ours = rows.find((r) => r.scenario === 'temporal' && r.name === TEMPORAL_OURS);
  if (temporal && ours) {
    const r = temporal.medianMs / ours.medianMs;
    // A peer kept and reported (issue 33): no goal.
    out.push({
      key: 'temporal_vs_verified',
      value: r,
      text: `Temporal's replay of ${temporal.tasks!.toLocaleString('en-US')} histories of the same Task lifecycles (${temporal.events!.toLocaleString('en-US')} events) ${s(temporal.medianMs)} vs our verified boot of the same Tasks ${s(ours.medianMs)} = ${x(r)}`,
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
      text: `reconciliation lookup (findJobs hit) 100,000 vs 1,000 jobs: ${(large.medianMs * 1000).toFixed(1)} µs vs ${(small.medianMs * 1000).toFixed(1)} µs = ${x(r)} (goal: flat, ≤ 1.5×)`,
    });
  }
  return out;
}

/** One-Task and 256-Task admission against the SQLite peer, the fsync floor and LMDB's own durable puts. */
function admissionGoals(rows: BenchRow[], out: Headline[]): void {
  const admission = (tasks: number, name: string) =>
    rows.find((r) => r.scenario === 'admission' && r.tasks === tasks && r.name.includes(name));
  const disk = (name: string) => rows.find((r) => r.scenario === 'disk' && r.name === name);
  const fsync = disk(FDATASYNC);
  const putOne = disk(PUT_ONE);
  const put256 = disk(PUT_256);
  const one = admission(1, 'kernel (TaskActor), LMDB');
  const onePeer = admission(1, 'SQLite peer');
  const oneSup = admission(1, 'Supervisor.send');
  if (one && onePeer) {
    const r = one.rate! / onePeer.rate!;
    out.push({
      key: 'admission_1_vs_peer',
      value: r,
      goal: '≥ 1.2×',
      met: r >= 1.2,
      text: `one-Task admission, kernel on LMDB ${perS(one.rate!)} vs on the SQLite peer ${perS(onePeer.rate!)} = ${x(r)}; goal ≥ 1.2×`,
    });
  }
  if (one && fsync) {
    const perTransitionMs = 1000 / one.rate!;
    const r = perTransitionMs / fsync.medianMs;
    out.push({
      key: 'admission_1_fsync_times',
      value: r,
      goal: '≤ 2.5',
      met: r <= 2.5,
      text: `one-Task admission ${(perTransitionMs * 1000).toFixed(0)} µs per transition = ${r.toFixed(1)} fsync-times (fdatasync of 200 B: ${(fsync.medianMs * 1000).toFixed(0)} µs${putOne ? `; one LMDB durable put: ${((1000 / putOne.rate!) * 1000).toFixed(0)} µs = ${(1000 / putOne.rate! / fsync.medianMs).toFixed(1)} fsync-times` : ''}${oneSup ? `; through the Supervisor ${perS(oneSup.rate!)}` : ''}); goal ≤ 2.5`,
    });
  }
  for (const row of [one, admission(256, 'kernel (TaskActor), LMDB')]) {
    const cost = row && transitionCost(row);
    if (row && cost)
      out.push({
        key: `admission_${row.tasks}_cost`,
        value: Number(row.detail!.mainCpuUsPerTransition),
        text: `${row.tasks === 1 ? 'one-Task' : `${row.tasks}-Task`} admission, kernel on LMDB, per transition: ${cost}${fsync ? `; fdatasync of 200 B ${(fsync.medianMs * 1000).toFixed(0)} µs` : ''}`,
      });
  }
  const sup = admission(256, 'Supervisor.send');
  const kernel = admission(256, 'kernel (TaskActor), LMDB');
  const peer = admission(256, 'SQLite peer');
  if (sup && peer) {
    const r = sup.rate! / peer.rate!;
    out.push({
      key: 'admission_256_vs_peer',
      value: r,
      goal: '≥ 2×',
      met: r >= 2,
      text: `256-Task admission through the Supervisor ${perS(sup.rate!)}${kernel ? ` (kernel ${perS(kernel.rate!)})` : ''} vs the kernel on the SQLite peer ${perS(peer.rate!)} = ${x(r)}; goal ≥ 2×`,
    });
  }
  if (sup && put256) {
    const r = sup.rate! / put256.rate!;
    out.push({
      key: 'admission_256_vs_puts',
      value: r,
      goal: '≥ 0.25×',
      met: r >= 0.25,
      text: `256-Task admission through the Supervisor ${perS(sup.rate!)} vs raw LMDB durable puts from 256 concurrent writers ${perS(put256.rate!)} = ${x(r)}; goal ≥ 0.25×`,
    });
  }
}

/** A kernel admission row's per-transition costs (main-thread CPU, pages and bytes written), undefined where it has none. */
function transitionCost(row: BenchRow): string | undefined {
  const d = row.detail ?? {};
  if (d.mainCpuUsPerTransition === undefined) return undefined;
  const parts = [`main thread ${Number(d.mainCpuUsPerTransition).toFixed(0)} µs CPU`];
  if (d.processCpuUsPerTransition !== undefined)
    parts.push(`every thread ${Number(d.processCpuUsPerTransition).toFixed(0)} µs`);
  if (d.pagesPerTransition !== undefined)
    parts.push(
      `${Number(d.pagesPerTransition).toFixed(1)} pages written (${Math.round(Number(d.writeBytesPerTransition)).toLocaleString('en-US')} B)`,
    );
  else if (d.writeBytesPerTransition !== undefined)
    parts.push(`${Math.round(Number(d.writeBytesPerTransition)).toLocaleString('en-US')} B written`);
  if (d.commitsPerTransition !== undefined) parts.push(`${Number(d.commitsPerTransition).toFixed(2)} LMDB commits`);
  return parts.join(', ');
}

/** The checkpointed start against the raw read + decode of the checkpoints, and with 10× the history. */
function checkpointGoals(rows: BenchRow[], out: Headline[]): void {
  const at = (name: string, perTask: number) =>
    rows.find((r) => r.scenario === 'checkpoint' && r.name === name && r.events! / r.tasks! === perTask);
  const short = at(CHECKPOINT_START, 10);
  const long = at(CHECKPOINT_START, 100);
  const judged = (short?.tasks ?? 0) >= 10_000;
  for (const [start, perTask] of [
    [short, 10],
    [long, 100],
  ] as const) {
    const floor = at(CHECKPOINT_FLOOR, perTask);
    if (!start || !floor) continue;
    const r = start.medianMs / floor.medianMs;
    out.push({
      key: `checkpoint_vs_floor_${perTask}`,
      value: r,
      goal: '≤ 1.5×',
      met: judged ? r <= 1.5 : undefined,
      text: `checkpointed start of ${start.tasks!.toLocaleString('en-US')} Tasks × ${perTask} events ${s(start.medianMs)} = ${x(r)} the raw read + JSON.parse of their checkpoints (${s(floor.medianMs)}); goal ≤ 1.5×`,
    });
  }
  if (short && long) {
    const r = long.medianMs / short.medianMs;
    out.push({
      key: 'checkpoint_flat',
      value: r,
      goal: 'flat (≤ 1.2×)',
      met: judged ? r <= 1.2 : undefined,
      text: `checkpointed start with 10× the history: ${s(long.medianMs)} vs ${s(short.medianMs)} = ${x(r)}; goal flat (≤ 1.2×)`,
    });
  }
}

/** `ordivon --help` and `ordivon list` each against `node -e 0` (issue 29): each ≤ 2×. */
function startupGoals(rows: BenchRow[], out: Headline[]): void {
  const find = (name: string) => rows.find((r) => r.scenario === 'startup' && r.name === name);
  const node = find(STARTUP_NODE);
  if (!node) return;
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  for (const [key, name, what] of [
    ['startup_help_vs_node', STARTUP_HELP, 'ordivon --help'],
    ['startup_list_vs_node', STARTUP_LIST, 'ordivon list'],
  ] as const) {
    const row = find(name);
    if (!row) continue;
    const r = row.medianMs / node.medianMs;
    out.push({
      key,
      value: r,
      goal: '≤ 2×',
      met: r <= 2,
      text: `${what} ${ms(row.medianMs)} = ${x(r)} node -e 0 (${ms(node.medianMs)}; medians of ${row.iterations} runs each, in turn); goal ≤ 2×`,
    });
  }
  // What no CLI can go below while it parses every record it reads with zod: a reading of the
  // goal for `list`, not a goal of its own.
  const floor = find(STARTUP_LIST_FLOOR);
  if (floor)
    out.push({
      key: 'startup_list_floor_vs_node',
      value: floor.medianMs / node.medianMs,
      text: `list's floor (import lmdb and zod, read and parse the projections, nothing else) ${ms(floor.medianMs)} = ${x(floor.medianMs / node.medianMs)} node -e 0`,
    });
}

/**
 * Admission on PostgreSQL with 1–3 Hosts against one Host on LMDB, and the takeover times beside
 * their leases; issue 33's goals: one Host on PostgreSQL ≥ 0.5× LMDB, and the CPU (Host processes
 * plus server) per transition within 1.2× from 1 to 3 Hosts.
 */
function clusterFigures(rows: BenchRow[], out: Headline[]): void {
  const find = (name: string) => rows.find((r) => r.scenario === 'cluster' && r.name === name);
  const lmdb = find(CLUSTER_LMDB);
  const pg = [1, 2, 3].map((hosts) => find(clusterPostgres(hosts))).filter((r) => r !== undefined);
  if (lmdb && pg.length > 0) {
    const last = pg.at(-1)!;
    out.push({
      key: 'cluster_vs_lmdb',
      value: last.rate! / lmdb.rate!,
      text: `${lmdb.tasks}-Task admission on PostgreSQL (fsync, synchronous_commit on): ${pg.map((r) => `${r.detail?.hosts} Host${r.detail?.hosts === 1 ? '' : 's'} ${perS(r.rate!)} = ${x(r.rate! / lmdb.rate!)}`).join(', ')} one Host on LMDB (${perS(lmdb.rate!)})`,
    });
    const first = pg.find((r) => r.detail?.hosts === 1);
    if (first) {
      const r = first.rate! / lmdb.rate!;
      out.push({
        key: 'cluster_1_vs_lmdb',
        value: r,
        goal: '≥ 0.5×',
        met: r >= 0.5,
        text: `${lmdb.tasks}-Task admission, one Host on PostgreSQL ${perS(first.rate!)} = ${x(r)} one Host on LMDB (${perS(lmdb.rate!)}); goal ≥ 0.5×`,
      });
    }
    const cpuPer = (r: BenchRow) =>
      r.detail?.hostCores === undefined
        ? undefined
        : ((Number(r.detail.hostCores) + Number(r.detail.serverCores ?? 0)) * 1e6) / r.rate!;
    const three = pg.find((r) => r.detail?.hosts === 3);
    const [one1, one3] = [first && cpuPer(first), three && cpuPer(three)];
    if (one1 !== undefined && one3 !== undefined) {
      const r = one3 / one1;
      out.push({
        key: 'cluster_cpu_flat',
        value: r,
        goal: '≤ 1.2×',
        met: r <= 1.2,
        text: `Host + server CPU per transition on PostgreSQL: 3 Hosts ${one3.toFixed(0)} µs vs 1 Host ${one1.toFixed(0)} µs = ${x(r)}; goal within 1.2×`,
      });
    }
    const cores = (r: BenchRow) => {
      const d = r.detail ?? {};
      const server = d.serverCores ? ` + server ${Number(d.serverCores).toFixed(2)}` : '';
      return `${Number(d.hostCores).toFixed(2)}${server} cores = ${(Number(d.machineBusy) * 100).toFixed(0)}% of ${d.cores}`;
    };
    if (lmdb.detail?.cores !== undefined)
      out.push({
        key: 'cluster_cpu',
        value: Number(last.detail?.machineBusy),
        text: `CPU busy during admission (Host processes + PostgreSQL server): LMDB ${cores(lmdb)}; ${pg.map((r) => `${r.detail?.hosts} on PostgreSQL ${cores(r)}`).join('; ')}`,
      });
  }
  for (const row of rows.filter((r) => r.scenario === 'cluster' && r.name.includes('takeover'))) {
    const d = row.detail ?? {};
    out.push({
      key: `cluster_takeover_${d.leaseMs}`,
      value: row.medianMs,
      text: `takeover after SIGKILL of 1 of 3 Hosts (${row.tasks} Tasks): served elsewhere after ${s(row.medianMs)}, claimed after ${s(Number(d.claimedMs))} (copied and rebuilt ${s(Number(d.adoptedAfterClaimMs))} after the claim); lease ${s(Number(d.leaseMs))} renewed every ${s(Number(d.renewEveryMs))}, ${s(Number(d.leaseLeftAtKillMs))} of it left at the kill`,
    });
  }
}
