import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { z } from 'zod';
import type { FanOutHostArgs } from '../fixtures/reliability/fanout-host-args.js';
import { startPostgres, type PostgresServer } from '../support/postgres.js';
import { until } from '../support/until.js';
import { auditHistory } from './cluster-audit.js';
import { LineProcess } from './host-process.js';
import { seededRandom } from './seeded-random.js';

const HOST = fileURLToPath(new URL('../fixtures/reliability/fanout-host.js', import.meta.url));
const AGENT = fileURLToPath(new URL('../fixtures/reliability/fanout-agent.js', import.meta.url));
const HOST_IDS = ['host-a', 'host-b', 'host-c'] as const;
/** The states a child may end in (frontier/branch.ts observes a child in these). */
const CHILD_ENDS = new Set(['completed', 'cancelled', 'waiting', 'blocked']);

export const FANOUT_TORTURE_DEFAULTS = {
  rounds: 4,
  parentsPerHost: 2,
  items: ['alpha', 'beta', 'gamma'],
  leaseMs: 1500,
  renewEveryMs: 300,
  pollMs: 200,
  sweepMs: 250,
  agentMs: 1000,
  maxLines: 15,
} as const;

export interface FanOutTortureOptions {
  seed: number;
  /** SIGKILL-and-restart rounds (default 4); rounds stop early once every parent completed. */
  rounds?: number;
  /** Parents each Host creates (default 2); each fans out one child per item. */
  parentsPerHost?: number;
  /** What each parent's `list` stage lists: one child Task per item (default three). */
  items?: readonly string[];
  /** An empty database to run on; default: a PostgreSQL server of its own, removed after. */
  url?: string;
  /** Where the Hosts' state roots go; default a temp directory, removed after. */
  dir?: string;
  leaseMs?: number;
  renewEveryMs?: number;
  pollMs?: number;
  /** How long each agent run takes before writing its artifact (default 1000 ms). */
  agentMs?: number;
  /**
   * Each round kills one of the Hosts holding a child's lease (seeded choice), after a seeded random
   * number in [1, maxLines] of its next commits of children (default 15).
   */
  maxLines?: number;
  /** How long any one wait (a boot, the lines before a kill) may take (default 30 s). */
  waitMs?: number;
  /** How long all rounds together may take (default 75 s): each wait in them ends by then. */
  roundsMs?: number;
  /** How long, after the last round, every parent may take to complete (default 45 s). */
  finishMs?: number;
  onRound?: (round: FanOutRound) => void;
}

export interface FanOutRound {
  round: number;
  hostId: string;
  /** After how many more of its lines the Host was killed. */
  afterLines: number;
  /** Parents and children whose unexpired lease the Host held when killed. */
  heldParents: number;
  heldChildren: number;
}

export interface FanOutTortureSummary {
  seed: number;
  rounds: number;
  kills: number;
  parents: number;
  /** Parents whose projection is `completed` at the end. */
  completedParents: number;
  /** Parents with one admitted `branch.join`. */
  joinedParents: number;
  /** Children listed by admitted `branch.open` events. */
  children: number;
  /** Joined parents with a child some of whose events were written by a Host other than the one that committed the join. */
  crossHostParents: number;
  /** Of those, the parents that completed (their acceptance passed on the merged work). */
  crossHostCompletedParents: number;
  crossHostChildren: number;
  /** clientRequestIds with more than one admitted `dispatch.intend`, or more than one ordivon_jobs row. */
  doubleDispatches: number;
  /** branchIds with more than one admitted `branch.join` (or `branch.open`). */
  doubleJoins: number;
  doubleOpens: number;
  /** Children listed by a `branch.open` that do not exist, or did not end (`completed`, `cancelled`, `waiting`, `blocked`). */
  lostChildren: number;
  /** Tasks that passed verification more than once; writes outside a lease; chain breaks (cluster-audit.ts). */
  doubleOutcomes: number;
  fencedAccepted: number;
  /** Agent processes that started and that wrote their artifact (the agents' marks). */
  agentRuns: number;
  agentRunsEnded: number;
  tasks: number;
  events: number;
  /** Everything found wrong: the counts above with their Tasks, Hosts' errors and stuck parents, waits that ran out. */
  problems: string[];
}

/**
 * The fan-out torture: three Host processes (fanout-host.ts) on one PostgreSQL database, each
 * creating and driving parents whose `fan` stage fans out child Tasks, every run a real agent
 * process (fanout-agent.ts through the `command` driver, confined). Each round SIGKILLs one Host
 * after a seeded number of its lines and restarts it at once on the same state root and Host id;
 * its parents and children are taken over by whichever Host claims them first, so a parent's
 * children may end up served by other Hosts than the parent. Then every parent must complete, and
 * the shared history is audited: no request dispatched twice, no join committed twice, no child
 * lost. Waits are on lines and on database state, each with a deadline.
 */
export async function runFanOutTorture(options: FanOutTortureOptions): Promise<FanOutTortureSummary> {
  const o = { ...FANOUT_TORTURE_DEFAULTS, waitMs: 30_000, roundsMs: 75_000, finishMs: 45_000, ...options };
  const random = seededRandom(o.seed);
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'ordivon-fanout-torture-'));
  const marks = join(dir, 'marks');
  mkdirSync(marks, { recursive: true });
  // The agents may run as another account (a confined run drops root): they append to marks/runs.
  chmodSync(marks, 0o777);
  const server: PostgresServer | undefined = options.url ? undefined : await startPostgres();
  const url = options.url ?? server!.url;
  const db = new pg.Pool({ connectionString: url, max: 2 });
  const problems: string[] = [];
  db.on('error', (error) => problems.push(`observer connection: ${error.message}`));
  const parentsOf = (hostId: string) =>
    Array.from({ length: o.parentsPerHost }, (_, i) => `fan${o.seed}-${hostId}-p${i + 1}`);
  const parents = HOST_IDS.flatMap(parentsOf);
  const hosts: FanOutProcess[] = [];
  let kills = 0;

  const spawnHost = async (index: number): Promise<FanOutProcess> => {
    const hostId = HOST_IDS[index]!;
    const args: FanOutHostArgs = {
      url,
      root: join(dir, hostId),
      workspaces: join(dir, 'workspaces'),
      hostId,
      parents,
      create: parentsOf(hostId),
      items: [...o.items],
      agent: AGENT,
      agentMs: o.agentMs,
      marks,
      leaseMs: o.leaseMs,
      renewEveryMs: o.renewEveryMs,
      statementTimeoutMs: 6000,
      pollMs: o.pollMs,
      sweepMs: o.sweepMs,
    };
    const host = new FanOutProcess(args, problems);
    hosts[index] = host;
    await host.untilLine((line) => line.startsWith('booted '), o.waitMs, 'boot');
    return host;
  };
  const completed = async () => (await states(db, parents)).filter(([, s]) => s === 'completed').length;

  let summary: Omit<FanOutTortureSummary, 'seed' | 'rounds' | 'kills' | 'problems'> | undefined;
  try {
    await Promise.all(HOST_IDS.map((_, index) => spawnHost(index)));
    // Every wait of the rounds ends by one deadline, so a run that hangs still ends well within a test's time.
    const roundsEnd = Date.now() + o.roundsMs;
    const left = () => Math.max(1000, Math.min(o.waitMs, roundsEnd - Date.now()));
    try {
      for (let round = 1; round <= o.rounds; round++) {
        if (Date.now() > roundsEnd) throw new Error(`round ${round}: the rounds ran past their ${o.roundsMs} ms`);
        // The kill hits a Host while it serves children: one of the Hosts holding a child's lease now.
        const holders = await until(`round ${round}: a Host holding a child`, left(), async () => {
          if ((await completed()) === parents.length) return 'done';
          const held = await childHolders(db);
          return held.length > 0 ? held : undefined;
        });
        if (holders === 'done') break;
        const index = HOST_IDS.indexOf(holders[Math.floor(random() * holders.length)] as (typeof HOST_IDS)[number]);
        const afterLines = 1 + Math.floor(random() * o.maxLines);
        const host = hosts[index]!;
        const target = host.childLines + afterLines;
        // The kill comes after the Host's next commits of children; once every parent completed there is nothing left to hit.
        const why = await until(
          `round ${round}: ${afterLines} more child commits of ${host.hostId}`,
          left(),
          async () => {
            if (host.childLines >= target) return 'lines';
            if ((await completed()) === parents.length) return 'done';
            // Its children ended (or moved) before that many commits: the round picks again.
            return (await childHolders(db)).includes(host.hostId) ? undefined : 'moved';
          },
        );
        if (why === 'done') break;
        if (why === 'moved') {
          round--;
          continue;
        }
        const held = await leasesOf(db, host.hostId);
        await host.kill();
        kills++;
        // Restarted at once on the same state root and Host id, as a service manager brings a Host back.
        await spawnHost(index);
        o.onRound?.({
          round,
          hostId: host.hostId,
          afterLines,
          heldParents: held.filter((t) => !t.includes('.g')).length,
          heldChildren: held.filter((t) => t.includes('.g')).length,
        });
      }
    } catch (error) {
      problems.push(`rounds stopped: ${(error as Error).message}`);
    }

    try {
      await until('every parent completed', o.finishMs, async () =>
        (await completed()) === parents.length ? true : undefined,
      );
    } catch (error) {
      problems.push(`${(error as Error).message}`, ...(await whereThingsAre(db, parents)));
    }
    await Promise.all(hosts.map((host) => host.stop(15_000)));
    summary = await audit(db, parents, problems);
  } catch (error) {
    problems.push(`run stopped: ${(error as Error).message}`);
  } finally {
    for (const host of hosts) await host.kill();
    await db.end();
    await server?.stop();
  }
  const runs = existsSync(join(marks, 'runs')) ? readFileSync(join(marks, 'runs'), 'utf8').split('\n') : [];
  if (!options.dir) rmSync(dir, { recursive: true, force: true });
  const found = summary ?? {
    parents: parents.length,
    completedParents: 0,
    joinedParents: 0,
    children: 0,
    crossHostParents: 0,
    crossHostCompletedParents: 0,
    crossHostChildren: 0,
    doubleDispatches: 0,
    doubleJoins: 0,
    doubleOpens: 0,
    lostChildren: 0,
    doubleOutcomes: 0,
    fencedAccepted: 0,
    agentRuns: 0,
    agentRunsEnded: 0,
    tasks: 0,
    events: 0,
  };
  if (!summary) problems.push('the history was not audited');
  return {
    seed: o.seed,
    rounds: o.rounds,
    kills,
    ...found,
    agentRuns: runs.filter((l) => l.endsWith(' start')).length,
    agentRunsEnded: runs.filter((l) => l.endsWith(' end')).length,
    problems,
  };
}

const Row = z.object({
  task_id: z.string(),
  revision: z.coerce.number().int(),
  host_id: z.string(),
  record: z.string(),
});
const Event = z.object({
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
  disposition: z.object({ admitted: z.boolean(), code: z.string().optional() }),
});
const Opened = z.object({
  branchId: z.string(),
  children: z.array(z.object({ taskId: z.string() })),
});

/** Each Task's state as its projection says, in one read. */
async function states(db: pg.Pool, taskIds: readonly string[]): Promise<Array<[string, string | undefined]>> {
  const { rows } = await db.query('SELECT task_id, record FROM ordivon_projections WHERE task_id = ANY($1)', [taskIds]);
  const found = new Map<string, string>();
  for (const row of rows as Array<{ task_id: string; record: string }>)
    found.set(row.task_id, String((JSON.parse(row.record) as { state?: unknown }).state));
  return taskIds.map((id) => [id, found.get(id)]);
}

/** The Tasks whose unexpired lease `hostId` holds now (database clock). */
async function leasesOf(db: pg.Pool, hostId: string): Promise<string[]> {
  const { rows } = await db.query(
    'SELECT task_id FROM ordivon_tasks WHERE lease_owner = $1 AND lease_until > now() AND revision > 0',
    [hostId],
  );
  return (rows as Array<{ task_id: string }>).map((r) => r.task_id);
}

/** The Hosts holding an unexpired lease on a child Task that has not ended, in HOST_IDS order. */
async function childHolders(db: pg.Pool): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT t.lease_owner, p.record FROM ordivon_tasks t LEFT JOIN ordivon_projections p USING (task_id)
     WHERE t.lease_until > now() AND t.revision > 0 AND t.task_id ~ '\\.g[0-9]+\\.[0-9]+$'`,
  );
  const owners = new Set(
    (rows as Array<{ lease_owner: string; record: string | null }>)
      .filter((r) => !r.record || !CHILD_ENDS.has(String((JSON.parse(r.record) as { state?: unknown }).state)))
      .map((r) => r.lease_owner),
  );
  return HOST_IDS.filter((h) => owners.has(h));
}

/** For a run that did not finish: each unfinished parent and each of its children, with its state and lease owner. */
async function whereThingsAre(db: pg.Pool, parents: readonly string[]): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT t.task_id, CASE WHEN t.lease_until > now() THEN t.lease_owner END AS owner, p.record
     FROM ordivon_tasks t LEFT JOIN ordivon_projections p USING (task_id) ORDER BY t.task_id`,
  );
  const tasks = new Map<string, { owner: string | null; state: string }>();
  for (const row of rows as Array<{ task_id: string; owner: string | null; record: string | null }>)
    tasks.set(row.task_id, {
      owner: row.owner,
      state: row.record ? String((JSON.parse(row.record) as { state?: unknown }).state) : 'none',
    });
  const jobs = await lastJobs(db);
  const job = (id: string) => {
    const found = jobs.get(id);
    return found ? `; last dispatch ${found.clientRequestId}: ${found.job}` : '';
  };
  const out: string[] = [];
  for (const parent of parents) {
    const p = tasks.get(parent);
    if (p?.state === 'completed') continue;
    const children = [...tasks].filter(([id]) => id.startsWith(`${parent}.`));
    const elsewhere = children.filter(([, c]) => c.owner !== p?.owner).length;
    out.push(
      `unfinished: ${parent} ${p?.state ?? 'not created'} (lease: ${p?.owner ?? 'none'}${job(parent)}); ` +
        `${elsewhere} of ${children.length} children held by another Host: ` +
        children
          .map(([id, c]) => `${id} ${c.state} (lease: ${c.owner ?? 'none'}${CHILD_ENDS.has(c.state) ? '' : job(id)})`)
          .join(', '),
    );
  }
  return out;
}

/**
 * Each Task's last admitted dispatch intent and what ordivon_jobs holds for it: the Host that ran
 * the job, the state it recorded, whether it is final, and whether that Host heartbeats now (a
 * Task taken over waits for a job of a live Host).
 */
async function lastJobs(db: pg.Pool): Promise<Map<string, { clientRequestId: string; job: string }>> {
  const { rows } = await db.query(
    `SELECT DISTINCT ON (e.task_id) e.task_id, e.record::json -> 'data' ->> 'clientRequestId' AS request,
            j.host_id, j.record::json ->> 'state' AS state, j.final,
            h.heartbeat_until > now() AND NOT h.stopped AS alive,
            split_part(j.record::json ->> 'executorId', ':', 2) AS ran_pid, h.pid AS host_pid
     FROM ordivon_events e
     LEFT JOIN ordivon_jobs j ON j.client_request_id = e.record::json -> 'data' ->> 'clientRequestId'
     LEFT JOIN ordivon_hosts h ON h.host_id = j.host_id
     WHERE e.record::json ->> 'type' = 'dispatch.intend'
     ORDER BY e.task_id, e.revision DESC`,
  );
  const out = new Map<string, { clientRequestId: string; job: string }>();
  for (const row of rows as Array<{
    task_id: string;
    request: string;
    host_id: string | null;
    state: string | null;
    final: boolean | null;
    alive: boolean | null;
    ran_pid: string | null;
    host_pid: number | null;
  }>)
    out.set(row.task_id, {
      clientRequestId: row.request,
      job: row.host_id
        ? `job on ${row.host_id} (${row.alive ? 'heartbeating' : 'gone'}) recorded ${row.state}${row.final ? ', final' : ''}` +
          (!row.final && row.alive && row.ran_pid !== String(row.host_pid)
            ? ` by its process pid ${row.ran_pid}, which is dead: ${row.host_id} heartbeats now from the restarted pid ${row.host_pid}`
            : '')
        : 'no job recorded',
    });
  return out;
}

/** Reads the whole shared history and checks the fan-outs in it; every finding goes to `problems`. */
async function audit(
  db: pg.Pool,
  parents: readonly string[],
  problems: string[],
): Promise<Omit<FanOutTortureSummary, 'seed' | 'rounds' | 'kills' | 'problems'>> {
  const history = await auditHistory(db, { acks: [], refusals: [], problems: [], unexpectedExits: 0 });
  problems.push(
    ...history.doubleOutcomes.map((p) => `double outcome: ${p}`),
    ...history.fencedAccepted.map((p) => `fenced write accepted: ${p}`),
    ...history.chain.map((p) => `chain: ${p}`),
    ...history.lost.map((p) => `lost: ${p}`),
  );

  const { rows } = await db.query(
    'SELECT task_id, revision, host_id, record FROM ordivon_events ORDER BY task_id, revision',
  );
  const events = rows.map((r) => Row.parse(r)).map((r) => ({ ...r, event: Event.parse(JSON.parse(r.record)) }));
  const writers = new Map<string, Set<string>>();
  for (const e of events) writers.set(e.task_id, (writers.get(e.task_id) ?? new Set()).add(e.host_id));
  const admitted = events.filter((e) => e.event.disposition.admitted);

  // Dispatches: one admitted intent per clientRequestId in the whole cluster, one job per request id.
  const intents = new Map<string, string[]>();
  for (const e of admitted.filter((e) => e.event.type === 'dispatch.intend')) {
    const id = String(e.event.data['clientRequestId']);
    intents.set(id, [...(intents.get(id) ?? []), `${e.task_id} r${e.revision} by ${e.host_id}`]);
  }
  const doubled = new Set<string>();
  for (const [id, at] of intents)
    if (at.length > 1) {
      doubled.add(id);
      problems.push(`double dispatch: ${id} intended ${at.length} times (${at.join(', ')})`);
    }
  const jobs = await db.query(
    "SELECT client_request_id, count(*) AS n, string_agg(host_id, ',') AS hosts FROM ordivon_jobs GROUP BY client_request_id HAVING count(*) > 1",
  );
  for (const row of jobs.rows as Array<{ client_request_id: string; n: string; hosts: string }>) {
    doubled.add(row.client_request_id);
    problems.push(`double dispatch: ${row.n} jobs for ${row.client_request_id} (${row.hosts})`);
  }

  // Branches: one open and one join per branchId; every child listed exists and ended.
  const opens = new Map<string, { parent: string; children: string[]; count: number }>();
  const joins = new Map<string, Array<{ parent: string; host: string; winners: string[] }>>();
  for (const e of admitted) {
    if (e.event.type === 'branch.open') {
      const open = Opened.parse(e.event.data);
      const known = opens.get(open.branchId);
      opens.set(open.branchId, {
        parent: e.task_id,
        children: open.children.map((c) => c.taskId),
        count: (known?.count ?? 0) + 1,
      });
    } else if (e.event.type === 'branch.join') {
      const branchId = String(e.event.data['branchId']);
      const winners = (e.event.data['winners'] as string[] | undefined) ?? [];
      joins.set(branchId, [...(joins.get(branchId) ?? []), { parent: e.task_id, host: e.host_id, winners }]);
    }
  }
  let doubleOpens = 0;
  let doubleJoins = 0;
  for (const [branchId, open] of opens)
    if (open.count > 1) {
      doubleOpens++;
      problems.push(`branch ${branchId} opened ${open.count} times`);
    }
  for (const [branchId, joined] of joins)
    if (joined.length > 1) {
      doubleJoins++;
      problems.push(`branch ${branchId} joined ${joined.length} times (by ${joined.map((j) => j.host).join(', ')})`);
    }

  /** Which Host wrote a Task's runs' ends and verifications: a run observed on one Host and verified on another ran in a workspace the second one lacks. */
  const story = (taskId: string) =>
    admitted
      .concat(events.filter((e) => e.event.type === 'verification.record' && !e.event.disposition.admitted))
      .filter(
        (e) =>
          e.task_id === taskId &&
          ['run.observe', 'evaluation.settle', 'branch.join', 'verification.record', 'task.cancel'].includes(
            e.event.type,
          ),
      )
      .sort((a, b) => a.revision - b.revision)
      .map((e) => {
        const how = e.event.disposition.admitted ? '' : ` ${e.event.disposition.code ?? 'refused'}`;
        const status =
          e.event.type === 'run.observe'
            ? ` ${String(e.event.data['jobStatus'])}${e.event.data['refused'] ? ` refused ${JSON.stringify(e.event.data['refused']).slice(0, 300)}` : ''}`
            : e.event.type === 'evaluation.settle'
              ? ` missing ${JSON.stringify(e.event.data['missing'] ?? [])}`
              : e.event.type === 'branch.join'
                ? ` (${String(e.event.data['reason'])})`
                : e.event.type === 'verification.record' && e.event.data['causes'] !== undefined
                  ? ` (causes: ${JSON.stringify(e.event.data['causes']).slice(0, 400)})`
                  : '';
        return `r${e.revision} ${e.event.type}${status}${how} by ${e.host_id}`;
      })
      .join(', ');
  const allIds = [...new Set(events.map((e) => e.task_id))];
  const state = new Map(await states(db, allIds));
  let children = 0;
  let lostChildren = 0;
  let crossHostParents = 0;
  let crossHostCompletedParents = 0;
  let crossHostChildren = 0;
  let joinedParents = 0;
  const listed = new Set<string>();
  for (const parent of parents) {
    const branches = [...opens].filter(([, open]) => open.parent === parent);
    if (branches.length !== 1)
      problems.push(`${parent}: ${branches.length} branches opened (one fan stage, assigned once, opens one)`);
    for (const [branchId, open] of branches) {
      const joined = joins.get(branchId)?.[0];
      if (!joined) problems.push(`${parent}: branch ${branchId} never joined`);
      else joinedParents++;
      let elsewhere = 0;
      for (const child of open.children) {
        children++;
        listed.add(child);
        const ended = state.get(child);
        if (ended === undefined || !CHILD_ENDS.has(ended)) {
          lostChildren++;
          problems.push(`lost child: ${child} of ${branchId} is ${ended ?? 'not in the history'}`);
        } else if (ended !== 'completed') problems.push(`child ${child} ended ${ended}: ${story(child)}`);
        if (joined && [...(writers.get(child) ?? [])].some((h) => h !== joined.host)) elsewhere++;
      }
      if (joined && open.children.some((c) => !joined.winners.includes(c)))
        problems.push(`${parent}: join all took ${joined.winners.length} of ${open.children.length} children`);
      crossHostChildren += elsewhere;
      if (elsewhere > 0) crossHostParents++;
      if (elsewhere > 0 && state.get(parent) === 'completed') crossHostCompletedParents++;
    }
    if (state.get(parent) !== 'completed')
      problems.push(`${parent} ended ${state.get(parent) ?? 'not created'}: ${story(parent)}`);
  }
  for (const id of allIds)
    if (!parents.includes(id) && !listed.has(id)) problems.push(`${id}: a Task no parent's branch lists`);

  return {
    parents: parents.length,
    completedParents: parents.filter((p) => state.get(p) === 'completed').length,
    joinedParents,
    children,
    crossHostParents,
    crossHostCompletedParents,
    crossHostChildren,
    doubleDispatches: doubled.size,
    doubleJoins,
    doubleOpens,
    lostChildren,
    doubleOutcomes: history.doubleOutcomes.length,
    fencedAccepted: history.fencedAccepted.length,
    agentRuns: 0,
    agentRunsEnded: 0,
    tasks: history.tasks,
    events: history.events,
  };
}

/**
 * One fanout-host.ts child process: its lines are counted and waited on (a count, a line of a
 * kind) instead of on time; `error` and `stuck` lines and exits nobody asked for are problems.
 */
class FanOutProcess extends LineProcess<FanOutHostArgs> {
  /** Lines of this Host's commits of child Tasks (`commit <parent>.g<n>.<i> …`): what a kill is placed by. */
  childLines = 0;

  constructor(args: FanOutHostArgs, problems: string[]) {
    super(HOST, args, problems);
  }

  protected onLine(line: string): void {
    if (/^commit \S+\.g\d+\.\d+ /.test(line)) this.childLines++;
    if (line.startsWith('error ') || line.startsWith('stuck ')) this.problems.push(`${this.hostId}: ${line}`);
    if (process.env['FANOUT_TORTURE_TRACE']) process.stderr.write(`[${this.hostId}] ${line}\n`);
  }
}
