import { join } from 'node:path';
import { deliverSteers } from './loop-steers.js';
import { createDriverPool, type DriverPool } from '../drivers/index.js';
import {
  assertConfinement,
  createRuntime,
  isRuntimeError,
  sharedJobRegistry,
  type ConfinementLimits,
  type ConfinementMode,
  type Runtime,
} from '../runtime/index.js';
import { StoreError, checkStateRoot, resolveStateRoot } from '../store/index.js';
import {
  HostError,
  hostErrorOf,
  defaultHostId,
  createSupervisor,
  type Supervisor,
  type SupervisorOptions,
  workspacesOf,
} from '../kernel/index.js';
import {
  assertReachOutsideState,
  checkHostHarnesses,
  createFrontierWork,
  runLimitsOf,
  type ApprovalPolicy,
  type EffectAdapter,
  type HarnessConfig,
  type HarnessFactory,
} from '../frontier/index.js';

/** `openHost`'s options: the supervisor's (but `frontier`, which the Host supplies) and the Host's own. */
export interface HostOptions extends Omit<SupervisorOptions, 'frontier' | 'concurrency'> {
  /**
   * Harness name (as `assignment.commit` names it) → how to launch it: a `HarnessConfig` (driver,
   * command, args, env, envFrom, model, timeoutMs, approvals), parsed by `openHost`, or a
   * `HarnessFactory` choosing one per Assignment.
   */
  harnesses: Record<string, HarnessConfig | HarnessFactory>;
  /**
   * The answer to provider approval / permission requests unless a harness names its own
   * (default `route`, `DEFAULT_APPROVALS`: docs/permissions.md).
   */
  approvals?: ApprovalPolicy;
  /**
   * How every process started for a Task is confined (docs/threat-model.md): `bwrap` (default) or
   * `none`. `bwrap` where no sandbox can be started refuses to open (`confinement_unavailable`).
   */
  confinement?: ConfinementMode;
  /** Resource limits of each confined process tree. */
  limits?: ConfinementLimits;
  /**
   * At most `runs` agent runs at once on this Host (docs/stages.md, "Concurrency limits"), as
   * `concurrency` in `ordivon.config.json`; each harness's `maxRuns` limits its own. Absent: no limit.
   */
  concurrency?: { runs?: number };
  /**
   * Driver pool threads: each agent run takes one for as long as it runs, so at most this many run
   * at once and a dispatched run past it waits for a thread. Default: `concurrency.runs` when it is
   * set, else 8.
   */
  maxThreads?: number;
  /**
   * Wraps the Runtime the frontier work calls (its lifecycle stays the Host's): how the demo and
   * tests lose a dispatch's response on purpose. @internal
   */
  wrapRuntime?: (runtime: Runtime) => Runtime;
  /** Effect adapters by the name a candidate's `effect` action gives (docs/effects.md). */
  effectAdapters?: Record<string, EffectAdapter>;
  /** Called with each step the Host takes (`compile_context`, `dispatch`, …) for progress output. */
  onStep?: (taskId: string, step: string) => void;
}

/** Driver pool threads when neither `maxThreads` nor `concurrency.runs` is given. */
const DEFAULT_HOST_THREADS = 8;

/**
 * The Supervisor's calls a Host answers itself (`host.createTask(…)`, `host.send(…)`): the same
 * functions, bound to its supervisor. `Host` names them again (a type of this list would be a name
 * the package does not export); a name missing here fails `openHost`'s return.
 */
const HOST_CALLS = [
  'createTask',
  'send',
  'sendRaw',
  'openRequest',
  'openRequestRaw',
  'getTask',
  'listTasks',
  'readTask',
  'events',
  'subscribe',
  'waitFor',
] as const;

/**
 * A running Host: `createTask`, `send`, `sendRaw`, `openRequest`, `openRequestRaw`, the reads
 * (`getTask`, `listTasks`, `readTask`, `events`), `subscribe` and `waitFor` as its Supervisor
 * answers them, that supervisor for the rest, and `stop` for the whole of it.
 */
export interface Host extends Pick<
  Supervisor,
  | 'createTask'
  | 'send'
  | 'sendRaw'
  | 'openRequest'
  | 'openRequestRaw'
  | 'getTask'
  | 'listTasks'
  | 'readTask'
  | 'events'
  | 'subscribe'
  | 'waitFor'
> {
  /** Creates Tasks, takes events, answers reads; the Host's frontier work runs behind it. */
  supervisor: Supervisor;
  /** The Runtime running this Host's jobs (`<state>/runtime`). @internal */
  runtime: Runtime;
  /** The driver pool harness runs execute on. @internal */
  pool: DriverPool;
  /**
   * Stops the supervisor (draining), then the Runtime and the driver pool. With
   * `jobs: 'finish'` the Runtime lets running provider and verification jobs end on their own and
   * records their results (the next boot reconciles them); the default stops them (`abandoned`).
   */
  stop(options?: { jobs?: 'stop' | 'finish' }): Promise<void>;
}

/**
 * A complete Host on one state root: the supervisor, the Runtime (its own LMDB under
 * `<state>/runtime`, workspaces under `<state>/workspaces`) and the piscina driver pool, wired
 * so that frontier work runs as Runtime jobs whose harness runs execute on the pool.
 *
 * Throws `invalid_config` (a harness configuration, `approvals` or `concurrency` does not parse; `path` names the
 * field, e.g. `harnesses.codex.driver`, `concurrency.runs`) or `env_missing` (a variable named in `envFrom` is not set)
 * before anything is opened or written.
 *
 * The Runtime opens first (its recovery marks jobs whose executor process is gone `abandoned`;
 * it never touches a live executor's jobs), so the supervisor's `reconciling` step can look up
 * every unknown dispatch before it serves.
 *
 * With `store` (many Hosts on PostgreSQL) the Runtime records its jobs in the cluster's job
 * registry as well (docs/many-hosts.md, "Jobs across Hosts"), so a Host taking a Task over finds
 * its dispatch by exact clientRequestId. The registry uses the Supervisor's shared history, which exists
 * from the Supervisor's join to its stop: records the Runtime makes outside that time (recovery
 * at open, the stop of its jobs at `stop()`) are put when it next can, or not at all; a Host then
 * finds such a job still running under a stopped Host, which counts as its executor gone.
 */
export async function openHost(options: HostOptions): Promise<Host> {
  // Before anything opens: a bad harness configuration or a missing envFrom variable writes nothing.
  const harnesses = checkHostHarnesses(options.harnesses, options.approvals, process.env);
  const concurrency = runLimitsOf(options.concurrency, harnesses);
  const confinement = options.confinement ?? 'bwrap';
  try {
    assertConfinement(confinement);
  } catch (error) {
    throw isRuntimeError(error, 'confinement_unavailable')
      ? new HostError('confinement_unavailable', error.message, { retryable: false })
      : error;
  }
  const root = resolveStateRoot(options.state);
  assertReachOutsideState(harnesses, root);
  // A file or an unreadable directory is refused by its code before the Runtime's LMDB tries it.
  try {
    checkStateRoot(root, { allowShared: options.allowSharedRoot });
  } catch (error) {
    throw error instanceof StoreError ? hostErrorOf(error) : error;
  }
  // A thread per run, so the run limit the user set is what runs at once, not a smaller pool.
  const pool = createDriverPool({ maxThreads: options.maxThreads ?? concurrency?.runs ?? DEFAULT_HOST_THREADS });
  const workspaces = options.workspaces ?? workspacesOf(root);
  // The Host id is settled here, before the Supervisor joins, so the Runtime's registry names it.
  const cluster = options.store
    ? { ...options.cluster, hostId: options.cluster?.hostId ?? defaultHostId() }
    : undefined;
  let supervisor: Supervisor | undefined;
  let runtime: Runtime;
  try {
    runtime = await createRuntime({
      root: join(root, 'runtime'),
      harness: (input, signal) => pool.run(input, { signal }),
      confinement,
      ...(options.limits ? { limits: options.limits } : {}),
      // The workspaces too when they are elsewhere: a run sees its own workspace, bound in, only.
      hidden: workspaces === workspacesOf(root) ? [root] : [root, workspaces],
      ...(cluster ? { registry: sharedJobRegistry(cluster.hostId, () => supervisor?.history) } : {}),
    });
  } catch (error) {
    await pool.close();
    throw error;
  }
  // Inside the state root, which no sandbox mounts: a confined command cannot reach the loop's log.
  const loops = join(root, 'loops');
  const frontier = createFrontierWork({
    runtime: options.wrapRuntime ? options.wrapRuntime(runtime) : runtime,
    harnesses,
    ...(options.approvals ? { approvals: options.approvals } : {}),
    workspaces,
    loops,
    ...(options.artifactContracts ? { artifactContracts: options.artifactContracts } : {}),
    ...(options.onStep ? { onStep: options.onStep } : {}),
    ...(options.effectAdapters ? { effectAdapters: options.effectAdapters } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    tasks: () => supervisor,
  });
  const { concurrency: _configured, ...supervisorOptions } = options;
  supervisor = createSupervisor({
    ...supervisorOptions,
    ...(cluster ? { cluster } : {}),
    ...(concurrency ? { concurrency } : {}),
    state: root,
    frontier,
  });
  try {
    await supervisor.start();
    // The jobs recovery abandoned before the join (a restarted Host's previous process) reach the
    // database now: a Host that took over one of their Tasks waits on their rows.
    await runtime.flushRegistry();
  } catch (error) {
    await runtime.close().catch(() => undefined);
    await pool.close();
    throw error;
  }
  const stopSteers = deliverSteers(supervisor, loops);
  const started = supervisor;
  const calls = Object.fromEntries(HOST_CALLS.map((name) => [name, started[name].bind(started)])) as Pick<
    Supervisor,
    (typeof HOST_CALLS)[number]
  >;
  return {
    ...calls,
    supervisor,
    runtime,
    pool,
    async stop(stopOptions = {}) {
      stopSteers();
      await supervisor.stop();
      await runtime.close(stopOptions);
      await pool.close();
    },
  };
}
