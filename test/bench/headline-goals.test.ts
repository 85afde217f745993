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

const GOALS = [
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

const judged = (scale: number, events?: number, tasks?: number) =>
  Object.fromEntries(
    headline(rows(scale, events, tasks))
      .filter((h) => GOALS.includes(h.key))
      .map((h) => [h.key, h.met]),
  );

describe("the bench headline judges issue 33's goals", () => {
  it('each goal holds just inside its threshold and fails just outside it', () => {
    const inside = judged(0.99);
    const outside = judged(1.01);
    assert.deepEqual(Object.keys(inside).sort(), [...GOALS].sort());
    for (const key of GOALS) {
      assert.equal(inside[key], true, `${key} inside`);
      assert.equal(outside[key], false, `${key} outside`);
    }
  });

  it('prints each goal as issue 33 states it', () => {
    const goals = Object.fromEntries(headline(rows(1)).map((h) => [h.key, h.goal]));
    assert.deepEqual(
      GOALS.map((key) => goals[key]),
      ['≥ 1.2×', '≤ 2.5', '≥ 2×', '≥ 0.25×', '≤ 3.3×', '≤ 1.5×', '≤ 1.5×', 'flat (≤ 1.2×)', '≥ 0.5×', '≤ 1.2×'],
    );
  });

  it('leaves the recovery and checkpoint goals unjudged on a run too small for them', () => {
    const small = judged(0.5, 10_000, 100);
    for (const key of ['full_replay_vs_floor', 'default_boot_vs_floor', 'checkpoint_vs_floor_10', 'checkpoint_flat'])
      assert.equal(small[key], undefined, key);
    assert.equal(small['admission_1_vs_peer'], true);
  });
});
