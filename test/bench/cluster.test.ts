import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runClusterBench } from '../../bench/cluster/cluster.bench.js';
import { CLUSTER_LMDB, clusterPostgres, clusterTakeover, headline } from '../../bench/report/headline.js';
import { CYCLE } from '../../bench/admission.bench.js';
import { postgresPart } from '../support/postgres.js';

const part = postgresPart();

describe('cluster scenario (--quick)', { skip: part.skip }, () => {
  it('measures admission on LMDB and on PostgreSQL with 1, 2 and 3 Host processes, and a takeover after SIGKILL whose claims all come after the lease ran out', async () => {
    const { rows, note } = await runClusterBench({ quick: true, log: () => {} });
    assert.equal(note, undefined);
    assert.deepEqual(
      rows.map((r) => r.name),
      [CLUSTER_LMDB, clusterPostgres(1), clusterPostgres(2), clusterPostgres(3), clusterTakeover(5_000)],
    );
    const [lmdb, ...admission] = rows.slice(0, 4);
    for (const row of [lmdb!, ...admission]) {
      assert.equal(row.scenario, 'cluster');
      assert.equal(row.tasks, 48);
      // Every Task ran its two Host cycles on the Host that created it: nothing refused, nothing lost.
      assert.equal(row.detail?.transitions, 48 * 2 * CYCLE.length);
      assert.equal(row.rate, (48 * 2 * CYCLE.length) / (row.medianMs / 1000));
    }
    assert.deepEqual(
      admission.map((r) => [r.detail?.hosts, r.detail?.store, r.detail?.fsync, r.detail?.synchronous_commit]),
      [
        [1, 'postgres', 'on', 'on'],
        [2, 'postgres', 'on', 'on'],
        [3, 'postgres', 'on', 'on'],
      ],
    );
    for (const row of admission) assert.equal(row.detail?.vsLmdb, row.rate! / lmdb!.rate!);
    // Where the CPU went: every row's Hosts used some, the server only on PostgreSQL rows (its
    // backends, read from /proc), and the machine's share is the two over its cores.
    for (const row of [lmdb!, ...admission]) {
      const d = row.detail!;
      assert.ok(Number(d.hostCores) > 0, JSON.stringify(d));
      assert.equal(d.machineBusy, (Number(d.hostCores) + Number(d.serverCores)) / Number(d.cores));
    }
    assert.equal(lmdb!.detail?.serverCores, 0);
    for (const row of admission) assert.ok(Number(row.detail?.serverCores) > 0, JSON.stringify(row.detail));

    const takeover = rows[4]!;
    const d = takeover.detail!;
    assert.deepEqual([takeover.tasks, d.hosts, d.tasksTotal, d.leaseMs, d.renewEveryMs], [16, 3, 48, 5_000, 1_666]);
    // A claim takes only a lease that ran out (database clock), and a Host serves a Task only after claiming it.
    assert.ok(Number(d.claimedMs) >= Number(d.leaseLeftAtKillMs), JSON.stringify(d));
    assert.ok(takeover.medianMs >= Number(d.claimedMs), JSON.stringify({ served: takeover.medianMs, ...d }));
    assert.equal(d.adoptedAfterClaimMs, takeover.medianMs - Number(d.claimedMs));

    const keys = headline(rows).map((h) => h.key);
    assert.deepEqual(keys, [
      'cluster_vs_lmdb',
      'cluster_1_vs_lmdb',
      'cluster_cpu_flat',
      'cluster_cpu',
      'cluster_takeover_5000',
    ]);
  });
});
