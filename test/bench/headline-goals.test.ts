import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CHECKPOINT_FLOOR,
  CHECKPOINT_START,
  CLUSTER_LMDB,
  DEFAULT_BOOT,
  FDATASYNC,
  FLOOR_ALL,
  PUT_256,
  VERIFIED,
  clusterPostgres,
  headline,
} from '../../bench/report/headline.js';
import type { BenchRow } from '../../bench/report/results-model.js';

const row = (r: Partial<BenchRow> & Pick<BenchRow, 'scenario' | 'name' | 'medianMs'>): BenchRow => ({
  iterations: 1,
  ...r,
});

/** One run's rows with each goal's measure at `scale` × its threshold (the floors fixed). */
function rows(scale: number, events = 1_000_000, tasks = 10_000): BenchRow[] {
  return [
    row({ scenario: 'disk', name: FDATASYNC, medianMs: 0.1 }),
    row({ scenario: 'disk', name: PUT_256, medianMs: 0, rate: 40_000 }),
    // one Task: ≥ 1.2× the peer's 1,000/s, ≤ 2.5 fsync-times of 100 µs (250 µs = 4,000/s)
    row({
      scenario: 'admission',
      name: 'admission: kernel (TaskActor), LMDB',
      tasks: 1,
      medianMs: 1,
      rate: 4_000 / scale,
    }),
    row({
      scenario: 'admission',
      name: 'admission: kernel (TaskActor), SQLite peer',
      tasks: 1,
      medianMs: 1,
      rate: 4_000 / 1.2,
    }),
    // 256 Tasks: ≥ 2× the peer, ≥ 0.25× the 40,000 puts/s
    row({
      scenario: 'admission',
      name: 'admission: Supervisor.send / Host events, LMDB',
      tasks: 256,
      medianMs: 1,
      rate: 10_000 / scale,
    }),
    row({
      scenario: 'admission',
      name: 'admission: kernel (TaskActor), SQLite peer',
      tasks: 256,
      medianMs: 1,
      rate: 5_000,
    }),
    row({ scenario: 'floor', name: FLOOR_ALL, events, tasks, medianMs: 1_000 }),
    row({ scenario: 'recovery', name: VERIFIED, events, tasks, medianMs: 3_300 * scale }),
    row({ scenario: 'recovery', name: DEFAULT_BOOT, events, tasks, medianMs: 1_500 * scale }),
    row({ scenario: 'checkpoint', name: CHECKPOINT_FLOOR, tasks, events: tasks * 10, medianMs: 100 }),
    row({ scenario: 'checkpoint', name: CHECKPOINT_START, tasks, events: tasks * 10, medianMs: 150 * scale }),
    row({ scenario: 'checkpoint', name: CHECKPOINT_FLOOR, tasks, events: tasks * 100, medianMs: 150 }),
    row({ scenario: 'checkpoint', name: CHECKPOINT_START, tasks, events: tasks * 100, medianMs: 180 * scale * scale }),
    row({ scenario: 'cluster', name: CLUSTER_LMDB, tasks: 256, medianMs: 1, rate: 2_000 }),
    row({
      scenario: 'cluster',
      name: clusterPostgres(1),
      tasks: 256,
      medianMs: 1,
      rate: 1_000 / scale,
      detail: { hosts: 1, hostCores: 1, serverCores: 0.5 },
    }),
    row({
      scenario: 'cluster',
      name: clusterPostgres(3),
      tasks: 256,
      medianMs: 1,
      rate: 1_000 / scale,
      detail: { hosts: 3, hostCores: 1.2 * scale, serverCores: 0.6 * scale },
    }),
  ];
}

/** Issue 33's goals: retired by issue 48, their figures kept as reference rows. */
const RETIRED = [
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
];

describe("the bench headline keeps issue 33's retired goals as reference figures", () => {
  it('reports each figure without a goal or a verdict, inside or outside its old threshold', () => {
    for (const scale of [0.99, 1.01]) {
      const heads = headline(rows(scale)).filter((h) => RETIRED.includes(h.key));
      assert.deepEqual(heads.map((h) => h.key).sort(), [...RETIRED].sort());
      for (const h of heads) {
        assert.equal(h.met, undefined, h.key);
        assert.equal(h.goal, undefined, h.key);
        assert.match(h.text, /\(reference; issue 33's retired goal .+\)$/, h.key);
        assert.doesNotMatch(h.text, /; goal /, h.key);
      }
    }
  });

  it('names the retired goal as issue 33 stated it', () => {
    const texts = Object.fromEntries(headline(rows(1)).map((h) => [h.key, h.text]));
    assert.match(texts['full_replay_vs_floor']!, /retired goal ≤ 3\.3×\)$/);
    assert.match(texts['admission_1_vs_peer']!, /retired goal ≥ 1\.2×\)$/);
    assert.match(texts['checkpoint_flat']!, /retired goal flat \(≤ 1\.2×\)\)$/);
  });
});

/** The peers scenario's rows: every peer at 1, the Host's figure at `hostScale` × its threshold. */
function peerRows(hostScale: number): BenchRow[] {
  const peers = ['restate', 'dbos', 'langgraph-sync', 'langgraph-default'];
  const out: BenchRow[] = [];
  const add = (system: string, measure: string, detail: Record<string, number>) =>
    out.push(
      row({
        scenario: 'peers',
        name: `peers ${measure}: ${system}`,
        medianMs: 0,
        detail: { system, measure, ...detail },
      }),
    );
  for (const system of peers) {
    // LangGraph's defaults are far ahead on every figure: reported, never the peer judged against.
    const k = system === 'langgraph-default' ? 100 : system === 'dbos' ? 1 : 2;
    add(system, 'latency', {
      p50Ms: 10 * (system === 'langgraph-default' ? 0.01 : k),
      p99Ms: 20 * (system === 'langgraph-default' ? 0.01 : k),
    });
    add(system, 'throughput', {
      stepsPerSecond: 100 / (system === 'langgraph-default' ? 0.01 : k),
      diskBytesPerStep: 1000 * k,
    });
    add(system, 'recovery', { allInFlightSteppingMs: 1000 * (system === 'langgraph-default' ? 0.01 : k) });
    add(system, 'memory', { bytesPerIdleTask: 5000 * k });
    add(system, 'duplicates-executor', { duplicateSteps: 1 });
  }
  // dbos is the best judged peer everywhere (k = 1): the Host at hostScale × each threshold.
  add('host-lmdb', 'latency', { p50Ms: 5 * hostScale, p99Ms: 10 * hostScale });
  add('host-lmdb', 'throughput', { stepsPerSecond: 200 / hostScale, diskBytesPerStep: 1000 * hostScale });
  add('host-lmdb', 'recovery', { allInFlightSteppingMs: 500 * hostScale });
  add('host-lmdb', 'memory', { bytesPerIdleTask: 5000 * hostScale });
  add('host-lmdb', 'duplicates-executor', { duplicateSteps: hostScale > 1 ? 1 : 0 });
  add('host-postgres', 'latency', { p50Ms: 10 * hostScale, p99Ms: 1 });
  add('host-postgres', 'throughput', { stepsPerSecond: 100 / hostScale, diskBytesPerStep: 1 });
  return out;
}

const PEER_GOALS = [
  'peers_a_p50',
  'peers_a_p99',
  'peers_b_rate',
  'peers_c_recovery',
  'peers_d_duplicates',
  'peers_e_memory',
  'peers_e_disk',
  'peers_f_p50',
  'peers_f_rate',
];

describe("the bench headline judges issue 48's goals against the best peer", () => {
  const judge = (scale: number) =>
    Object.fromEntries(
      headline(peerRows(scale))
        .filter((h) => PEER_GOALS.includes(h.key))
        .map((h) => [h.key, h]),
    );

  it('each goal holds just inside its threshold and fails just outside it', () => {
    const inside = judge(0.99);
    const outside = judge(1.01);
    assert.deepEqual(Object.keys(inside).sort(), [...PEER_GOALS].sort());
    for (const key of PEER_GOALS) {
      assert.equal(inside[key]!.met, true, `${key} inside`);
      assert.equal(outside[key]!.met, false, `${key} outside`);
    }
  });

  it('judges against the best judged peer, never LangGraph with its defaults', () => {
    const heads = judge(1);
    assert.equal(heads['peers_a_p50']!.goal, '≤ 0.5× dbos');
    assert.equal(heads['peers_b_rate']!.goal, '≥ 2× dbos');
    assert.equal(heads['peers_c_recovery']!.goal, '≤ 0.5× dbos');
    assert.equal(heads['peers_e_memory']!.goal, '≤ 1× dbos');
    assert.equal(heads['peers_f_rate']!.goal, '≥ 1× dbos');
    assert.equal(heads['peers_d_duplicates']!.goal, '0');
    assert.match(heads['peers_d_duplicates']!.text, /restate \(executor killed\) 1/);
  });

  it('judges an idle Task that costs the best peer nothing measurable on the values themselves', () => {
    const rows = peerRows(0.5).map((r) =>
      r.detail?.['measure'] === 'memory' && r.detail['system'] === 'dbos'
        ? { ...r, detail: { ...r.detail, bytesPerIdleTask: -10 } }
        : r,
    );
    const memory = headline(rows).find((h) => h.key === 'peers_e_memory')!;
    assert.equal(memory.met, false);
    assert.match(memory.text, /n\/a/);
  });
});
