import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { ClusterWriterArgs } from '../fixtures/reliability/cluster-writer-args.js';
import { startPostgres, type PostgresServer } from '../support/postgres.js';
import { startProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/until.js';
import { auditHistory, leasesOf, owners, takenOver } from './cluster-audit.js';
import { HostProcess, type WriterLog } from './host-process.js';
import { seededRandom } from './seeded-random.js';

export type ClusterFault = 'kill' | 'pause' | 'blackhole' | 'reset';
const FAULTS: readonly ClusterFault[] = ['kill', 'pause', 'blackhole', 'reset'];

/** Acknowledgements a Host must print after every one of its connections was reset: it kept serving. */
const ACKS_AFTER_RESET = 10;
const HOST_IDS = ['host-a', 'host-b', 'host-c'] as const;

/**
 * Lanes per Host, lease and renewal (short, so rounds are quick), the statement timeout, and the
 * most lines before a fault. The statement timeout outlasts a pause: a Host woken by SIGCONT then
 * reads the answers of the appends it had in flight (they wait in its sockets) and goes on writing
 * under its old epochs, which is the fenced wake-up to see. With a timeout shorter than the pause,
 * the overdue timers fire first on waking (Linux ends the interrupted epoll_wait with EINTR and
 * libuv runs timers before polling again): the calls fail storage_failed and nothing is fenced.
 */
export const CLUSTER_TORTURE_DEFAULTS = {
  tasks: 6,
  leaseMs: 1500,
  renewEveryMs: 300,
  statementTimeoutMs: 6000,
  maxLines: 120,
} as const;

export interface ClusterTortureOptions {
  rounds: number;
  seed: number;
  /** Lanes per Host: how many Tasks each drives at once (default 6). */
  tasks?: number;
  /** An empty database to run on; default: a PostgreSQL server of its own (test/support/postgres.ts), removed after. */
  url?: string;
  /** Where the Hosts' state roots go; default a temp directory, removed after. */
  dir?: string;
  /** Lease length and renewal period of every Host (default 1500 / 300 ms: short, so rounds are quick). */
  leaseMs?: number;
  renewEveryMs?: number;
  /** Every Host's client-side statement timeout (default 6 s: longer than a pause, see CLUSTER_TORTURE_DEFAULTS). */
  statementTimeoutMs?: number;
  /** A fault comes after a seeded random number of the chosen Host's lines in [1, maxLines] (default 120). */
  maxLines?: number;
  /** How long any one wait (lines, a takeover, the final ownership) may take before the run fails (default 60 s). */
  waitMs?: number;
  onRound?: (round: ClusterRound) => void;
}

export interface ClusterRound {
  round: number;
  hostId: string;
  fault: ClusterFault;
  /** Tasks the Host held when the fault came, and how many of them were seen acquired again before it was let go. */
  held: number;
  takenOver: number;
  acknowledged: number;
}

export interface ClusterTortureSummary {
  rounds: number;
  kills: number;
  pauses: number;
  blackholes: number;
  /** Rounds that reset every connection of one Host (TCP RST through its proxy) and saw it acknowledge more events after. */
  resets: number;
  /** Host processes that exited on their own (a reset used to make one exit 1): must be 0. */
  unexpectedExits: number;
  acknowledged: number;
  lost: number;
  doubleOutcomes: number;
  fencedAccepted: number;
  /** Tasks of a faulted Host seen acquired again (by another Host; after a kill, by any process) before the round went on. */
  takeovers: number;
  /** Appends refused `lease_lost`, and how many of them a Host printed after it was resumed or healed. */
  leaseLostRefusals: number;
  refusedAfterResume: number;
  /** Tasks that, after the Hosts were started once more, no live Host held and served within the wait. */
  unowned: number;
  tasks: number;
  events: number;
  /** Everything found wrong, each with its Task and revision: the counts above, chain breaks, unexpected exits. */
  problems: string[];
}

/**
 * The cluster torture (issue 20): three Host processes on one PostgreSQL database, each through a
 * TCP proxy of its own, drive many Tasks while each round SIGKILLs one (it restarts on the same
 * state root and Host id), SIGSTOPs one past its lease, blackholes one's connection past its
 * lease, or resets every connection of one (it must keep serving, and never exit); paused and partitioned Hosts are let go only once another Host took one of their Tasks
 * over (seen in ordivon_lease_log), so they wake up fenced. Afterwards the whole history is
 * audited (cluster-audit.ts), and the Hosts are started once more: every Task must end up held
 * and served by a live one. Waits are on lines and on database state, each with a deadline.
 */
export async function runClusterTorture(options: ClusterTortureOptions): Promise<ClusterTortureSummary> {
  const waitMs = options.waitMs ?? 60_000;
  const lanes = options.tasks ?? CLUSTER_TORTURE_DEFAULTS.tasks;
  const random = seededRandom(options.seed);
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'ordivon-cluster-torture-'));
  const server: PostgresServer | undefined = options.url ? undefined : await startPostgres();
  const url = options.url ?? server!.url;
  const db = new pg.Pool({ connectionString: url, max: 2 });
  const proxies: TcpProxy[] = [];
  const hosts: HostProcess[] = [];
  const log: WriterLog = { acks: [], refusals: [], problems: [], unexpectedExits: 0 };
  // An idle observer connection the server ends is a problem of the run, reported with the rest,
  // not an uncaught exception that takes the test process down before the audit.
  db.on('error', (error) => log.problems.push(`observer connection: ${error.message}`));
  const counts = { kills: 0, pauses: 0, blackholes: 0, resets: 0, takeovers: 0 };
  let spawned = 0;
  const spawnHost = async (index: number, laneCount: number): Promise<HostProcess> => {
    const proxied = new URL(url);
    proxied.port = String(proxies[index]!.port);
    const args: ClusterWriterArgs = {
      url: proxied.toString(),
      root: join(dir, HOST_IDS[index]!),
      hostId: HOST_IDS[index]!,
      // A new seed each start: Task and event ids stay unique when a Host id comes back.
      seed: options.seed * 1000 + spawned++,
      lanes: laneCount,
      leaseMs: options.leaseMs ?? CLUSTER_TORTURE_DEFAULTS.leaseMs,
      renewEveryMs: options.renewEveryMs ?? CLUSTER_TORTURE_DEFAULTS.renewEveryMs,
      statementTimeoutMs: options.statementTimeoutMs ?? CLUSTER_TORTURE_DEFAULTS.statementTimeoutMs,
    };
    const host = new HostProcess(args, log);
    hosts[index] = host;
    await host.untilLine((line) => line.startsWith('booted '), waitMs, 'boot');
    return host;
  };

  let audit: Awaited<ReturnType<typeof auditHistory>> | undefined;
  let unowned = 0;
  try {
    const target = new URL(url);
    for (const _ of HOST_IDS) proxies.push(await startProxy(Number(target.port || 5432), target.hostname));
    await Promise.all([...HOST_IDS.keys()].map((index) => spawnHost(index, lanes)));

    let order: ClusterFault[] = [];
    try {
      for (let round = 1; round <= options.rounds; round++) {
        // Each run of four rounds has every fault once, in a seeded order.
        if (order.length === 0) order = shuffled(FAULTS, random);
        const fault = order.pop()!;
        const index = Math.floor(random() * HOST_IDS.length);
        let host = hosts[index]!;
        await host.untilMoreLines(
          1 + Math.floor(random() * (options.maxLines ?? CLUSTER_TORTURE_DEFAULTS.maxLines)),
          waitMs,
        );
        const held = await until(`round ${round}: ${host.hostId} holds a lease`, waitMs, async () => {
          const leases = await leasesOf(db, host.hostId);
          return leases.length > 0 ? leases : undefined;
        });
        const takeover = (except: string | undefined) =>
          until(`round ${round}: a Task of ${host.hostId} taken over after its ${fault}`, waitMs, async () => {
            const n = await takenOver(db, held, except);
            return n > 0 ? n : undefined;
          });
        let taken: number;
        if (fault === 'kill') {
          counts.kills++;
          await host.kill();
          // Restarted at once on the same state root and Host id, the way a service manager brings a
          // Host back: the new process must not write under the dead one's epochs although its name
          // is the same, and its mirror must catch up with what others wrote meanwhile.
          host = await spawnHost(index, lanes);
          taken = await takeover(undefined);
        } else if (fault === 'pause') {
          counts.pauses++;
          host.signal('SIGSTOP');
          try {
            taken = await takeover(host.hostId);
          } finally {
            // Also when the wait failed: the audit and the final restart need every Host reachable.
            host.resumed = true;
            host.signal('SIGCONT');
          }
        } else if (fault === 'reset') {
          counts.resets++;
          // Every connection of the Host at once, as a proxy restarting or a middlebox losing its
          // state does: the Host must not exit, and must go on admitting events on new connections.
          if (proxies[index]!.reset() === 0)
            log.problems.push(`round ${round}: ${host.hostId} had no connection to reset`);
          const target = log.acks.filter((a) => a.hostId === host.hostId).length + ACKS_AFTER_RESET;
          await host.untilLine(
            () => log.acks.filter((a) => a.hostId === host.hostId).length >= target,
            waitMs,
            `${ACKS_AFTER_RESET} acknowledgements after its connections were reset`,
          );
          taken = 0;
        } else {
          counts.blackholes++;
          proxies[index]!.blackhole();
          try {
            taken = await takeover(host.hostId);
          } finally {
            host.resumed = true;
            proxies[index]!.heal();
          }
        }
        counts.takeovers += taken;
        options.onRound?.({
          round,
          hostId: host.hostId,
          fault,
          held: held.length,
          takenOver: taken,
          acknowledged: log.acks.length,
        });
      }
    } catch (error) {
      // A round that cannot go on (a wait ran out, a Host did not boot): what was written is audited all the same.
      log.problems.push(`rounds stopped: ${(error as Error).message}`);
    }

    for (const host of hosts) await host.kill();
    audit = await auditHistory(db, log);
    unowned = await finalOwnership(db, spawnHost, hosts, waitMs, log);
  } catch (error) {
    log.problems.push(`run stopped: ${(error as Error).message}`);
  } finally {
    for (const host of hosts) await host.kill();
    for (const proxy of proxies) await proxy.close();
    await db.end();
    await server?.stop();
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  }

  const found = audit ?? { lost: [], doubleOutcomes: [], fencedAccepted: [], chain: [], tasks: 0, events: 0 };
  return {
    rounds: options.rounds,
    ...counts,
    unexpectedExits: log.unexpectedExits,
    acknowledged: log.acks.length,
    lost: found.lost.length,
    doubleOutcomes: found.doubleOutcomes.length,
    fencedAccepted: found.fencedAccepted.length,
    leaseLostRefusals: log.refusals.length,
    refusedAfterResume: log.refusals.filter((r) => r.afterResume).length,
    unowned,
    tasks: found.tasks,
    events: found.events,
    problems: [
      ...log.problems,
      ...(audit ? [] : ['the history was not audited']),
      ...found.lost.map((p) => `lost: ${p}`),
      ...found.doubleOutcomes.map((p) => `double outcome: ${p}`),
      ...found.fencedAccepted.map((p) => `fenced write accepted: ${p}`),
      ...found.chain.map((p) => `chain: ${p}`),
    ],
  };
}

/**
 * Starts the three Hosts once more (serving only) and waits until every Task is held, on an
 * unexpired lease, by one of them that also serves it; returns how many were not by the deadline.
 * Then stops them cleanly.
 */
async function finalOwnership(
  db: pg.Pool,
  spawnHost: (index: number, laneCount: number) => Promise<HostProcess>,
  hosts: HostProcess[],
  waitMs: number,
  log: WriterLog,
): Promise<number> {
  await Promise.all([...HOST_IDS.keys()].map((index) => spawnHost(index, 0)));
  let orphans: string[] = [];
  try {
    await until('every Task held and served by a live Host', waitMs, async () => {
      const served = new Map<string, Set<string>>();
      for (const host of hosts) {
        const answer = await host.ask('list', 'serving', waitMs);
        served.set(host.hostId, new Set(answer.slice('serving '.length).split(',').filter(Boolean)));
      }
      orphans = [...(await owners(db))]
        .filter(([taskId, owner]) => owner === null || !served.get(owner)?.has(taskId))
        .map(([taskId, owner]) => `${taskId} (lease: ${owner ?? 'none'})`);
      return orphans.length === 0 ? true : undefined;
    });
  } catch (error) {
    log.problems.push(
      `final ownership: ${(error as Error).message}`,
      ...orphans.map((o) => `not held and served by a live Host: ${o}`),
    );
  }
  for (const host of hosts) await host.stop(waitMs);
  return orphans.length;
}

/** A seeded Fisher–Yates shuffle. */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
