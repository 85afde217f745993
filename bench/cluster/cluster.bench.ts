// Scenario: cluster — many Hosts on one PostgreSQL history (issue 20), beside one Host on LMDB.
//
// Admission: durable admitted transitions/s with 256 active Tasks, the admission scenario's
// workload (Assignment through `Supervisor.send`, Host events on the Task's actor, one transition
// at a time per Task, all Tasks at once). Rows: one Host on its embedded LMDB store, then 1, 2 and
// 3 Hosts on PostgreSQL. Every Host is a process of its own (cluster-host.ts) with its own state
// root and hostId, creates its share of the Tasks (Task i on Host i mod N) outside the timed
// window and drives the Tasks it serves; the rate is all Hosts' admitted transitions over the
// window from the first Host's start to the last Host's end.
//
// Takeover: 3 Hosts hold the Tasks (one Host cycle of history each); one is killed (SIGKILL) and
// the time runs until every Task it held is served by another Host, as the survivors report it
// (each looks every WATCH_EVERY_MS); the lease log gives when each was claimed. Takeover ≈ what was
// left of the lease at the kill + up to one keeper interval + claiming, copying and rebuilding the
// Tasks (one round, batch after batch).
//
// Each admission row says where the CPU went (the Host processes' and the server's CPU time over
// the timed windows): on a machine whose cores are all busy, more Hosts only share them.
//
// The scenario runs its own PostgreSQL server (test/support/postgres.ts), fsync and
// synchronous_commit on, in the temp directory where the Hosts' state roots are: the same disk.
//
//   node dist/bench/cluster/cluster.bench.js [--quick]
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { DEFAULT_LEASE_MS } from '../../store/postgres/index.js';
import { createDatabase, postgresPart, startPostgres } from '../../test/support/postgres.js';
import { admissionCycles } from '../admission.bench.js';
import { WATCH_EVERY_MS } from './cluster-protocol.js';
import { HostGroup, renewEvery, sql } from './host-group.js';
import { CLUSTER_LMDB, clusterPostgres, clusterTakeover } from '../report/headline.js';
import type { BenchContext, BenchRow } from '../report/results-model.js';
import { scenarioArgs, timeIt, type Timing } from '../util.js';
import { treeCpuMs } from '../../os/index.js';
import { takeover, type Takeover } from './takeover.js';

/** Server settings of the run; what the server reports back (`SHOW`) goes into each row. */
const SERVER_SETTINGS = { fsync: 'on', synchronous_commit: 'on', shared_buffers: '128MB', max_connections: 100 };
const SHOWN = [
  'server_version',
  'fsync',
  'synchronous_commit',
  'full_page_writes',
  'wal_sync_method',
  'shared_buffers',
];

interface Size {
  tasks: number;
  cycles: number;
  iterations: number;
  /** Lease lengths the takeover is timed with (renewed every third of it). */
  leases: number[];
  takeovers: number;
}
const FULL: Size = {
  tasks: 256,
  cycles: admissionCycles(false, 256),
  iterations: 3,
  leases: [DEFAULT_LEASE_MS, 2_000],
  takeovers: 3,
};
// The quick lease is not the shortest: on a loaded machine (tests running beside it) a Host can miss
// renewals for a second or two, and its Tasks would move before the kill.
const QUICK: Size = { tasks: 48, cycles: admissionCycles(true, 48), iterations: 1, leases: [5_000], takeovers: 1 };

/**
 * Where the CPU went over every timed window of a row: the cores the Host processes and the
 * server kept busy on average, and the share of the machine's cores both took. On a machine whose
 * cores are all busy, more Host processes only share them.
 */
export interface CpuShare {
  cores: number;
  hostCores: number;
  serverCores: number;
  machineBusy: number;
}

/** The server's CPU meter (the postmaster's pid and its backends), or none for LMDB rows. */
type ServerCpu = (() => number) | undefined;

/** Admission with `hosts` Hosts (on PostgreSQL at a fresh database each run when `freshDb` is given). */
async function admission(
  size: Size,
  hosts: number,
  freshDb?: () => Promise<string>,
  serverCpu?: ServerCpu,
): Promise<{ t: Timing; admitted: number; cpu: CpuShare }> {
  let running: HostGroup | undefined;
  let admitted = 0;
  const sum = { windowMs: 0, hostMs: 0, serverMs: 0 };
  try {
    const t = await timeIt(
      `cluster ${hosts} ${freshDb ? 'postgres' : 'lmdb'}`,
      async () => {
        const before = serverCpu?.() ?? 0;
        const driven = await running!.drive(size.cycles);
        sum.serverMs += (serverCpu?.() ?? 0) - before;
        sum.windowMs += driven.windowMs;
        sum.hostMs += driven.cpuMs;
        admitted = driven.admitted;
        return driven.windowMs;
      },
      {
        iterations: size.iterations,
        prepare: async () =>
          void (running = await HostGroup.start(hosts, size.tasks, freshDb ? await freshDb() : undefined)),
        cleanup: async () => void (await running?.stop()),
      },
    );
    const cores = availableParallelism();
    const hostCores = sum.hostMs / sum.windowMs;
    const serverCores = sum.serverMs / sum.windowMs;
    return { t, admitted, cpu: { cores, hostCores, serverCores, machineBusy: (hostCores + serverCores) / cores } };
  } finally {
    // A run that failed midway left its Hosts running (after a clean stop this only removes the roots).
    await running?.kill();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The cluster scenario's rows; skipped with a note where PostgreSQL is not installed (not under CI=true). */
export async function runClusterBench(ctx: BenchContext): Promise<{ rows: BenchRow[]; note?: string }> {
  const part = postgresPart();
  if (part.skip) return { rows: [], note: `cluster skipped: ${part.skip}` };
  const size = ctx.quick ? QUICK : FULL;
  const rows: BenchRow[] = [];
  const lmdb = await admission(size, 1);
  const lmdbRate = lmdb.admitted / (lmdb.t.medianMs / 1000);
  const base = { tasks: size.tasks, rateUnit: 'transitions/s' };
  rows.push({
    scenario: 'cluster',
    name: CLUSTER_LMDB,
    ...base,
    ...lmdb.t,
    rate: lmdbRate,
    detail: { hosts: 1, store: 'lmdb', transitions: lmdb.admitted, durable: true, ...lmdb.cpu },
  });
  ctx.log(`cluster: LMDB, 1 Host: ${lmdbRate.toFixed(0)} transitions/s`);

  const server = await startPostgres({ settings: SERVER_SETTINGS });
  try {
    const shown = await sql(
      server.url,
      z.object({ name: z.string(), setting: z.string() }),
      `SELECT name, current_setting(name) AS setting FROM unnest($1::text[]) AS name`,
      [SHOWN],
    );
    const settings = Object.fromEntries(shown.map((s) => [s.name, s.setting]));
    let databases = 0;
    const freshDb = () => createDatabase(server.url, `bench_cluster_${++databases}`);
    const serverCpu = () => treeCpuMs(server.pid);
    for (const hosts of [1, 2, 3]) {
      const { t, admitted, cpu } = await admission(size, hosts, freshDb, serverCpu);
      const rate = admitted / (t.medianMs / 1000);
      rows.push({
        scenario: 'cluster',
        name: clusterPostgres(hosts),
        ...base,
        ...t,
        rate,
        detail: {
          hosts,
          store: 'postgres',
          transitions: admitted,
          durable: true,
          vsLmdb: rate / lmdbRate,
          leaseMs: DEFAULT_LEASE_MS,
          renewEveryMs: renewEvery(DEFAULT_LEASE_MS),
          ...cpu,
          ...settings,
        },
      });
      ctx.log(
        `cluster: PostgreSQL, ${hosts} Host(s): ${rate.toFixed(0)} transitions/s = ${(rate / lmdbRate).toFixed(2)}× LMDB`,
      );
    }
    for (const leaseMs of size.leases) {
      const runs: Takeover[] = [];
      for (let i = 0; i < size.takeovers; i++) {
        runs.push(await takeover(size.tasks, leaseMs, await freshDb()));
        ctx.log(`cluster: takeover, lease ${leaseMs} ms: ${runs.at(-1)!.servedMs} ms`);
      }
      const servedMs = runs.map((r) => r.servedMs);
      rows.push({
        scenario: 'cluster',
        name: clusterTakeover(leaseMs),
        tasks: runs[0]!.tasks,
        medianMs: median(servedMs),
        minMs: Math.min(...servedMs),
        maxMs: Math.max(...servedMs),
        iterations: runs.length,
        detail: {
          hosts: 3,
          tasksTotal: size.tasks,
          leaseMs,
          renewEveryMs: renewEvery(leaseMs),
          claimedMs: median(runs.map((r) => r.claimedMs)),
          // From the last claim to the last Task served, per run: copying the Tasks and rebuilding them.
          adoptedAfterClaimMs: median(runs.map((r) => r.servedMs - r.claimedMs)),
          leaseLeftAtKillMs: median(runs.map((r) => r.remainingMs)),
          watchEveryMs: WATCH_EVERY_MS,
          ...settings,
        },
      });
    }
  } finally {
    await server.stop();
  }
  return { rows };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { rows, note } = await runClusterBench({
    quick: scenarioArgs('cluster/cluster.bench').quick,
    log: (l) => console.error(l),
  });
  if (note) console.error(note);
  console.table(
    rows.map((r) => ({ name: r.name, tasks: r.tasks, rate: r.rate?.toFixed(0), medianMs: r.medianMs.toFixed(0) })),
  );
}
