import { join } from 'node:path';
import { createDriverPool, type DriverPool } from '../drivers/index.js';
import { createRuntime, journalJobRegistry, type Runtime } from '../runtime/index.js';
import { StoreError, checkStateRoot, resolveStateRoot } from '../store/index.js';
import { hostErrorOf } from './errors.js';
import { checkHostHarnesses, type ApprovalPolicy } from './harness-config.js';
import { defaultHostId } from './cluster.js';
import { createHostEffects, type HostEffectsOptions } from './host-effects.js';
import { createSupervisor, type Supervisor, type SupervisorOptions } from './supervisor.js';

export interface HostOptions extends Omit<SupervisorOptions, 'effects'> {
  /** Harness name → how to launch it (`HarnessConfig`: driver, command, args, env, envFrom, …) or a factory of one. */
  harnesses: HostEffectsOptions['harnesses'];
  /** The answer to provider approval / permission requests unless a harness names its own (default `accept`). */
  approvals?: ApprovalPolicy;
  /** Driver pool threads (default 2). */
  maxThreads?: number;
  dropDispatchResponse?: HostEffectsOptions['dropDispatchResponse'];
  /** Effect adapters by the name a candidate's `effect` action gives (docs/effects.md). */
  effectAdapters?: HostEffectsOptions['effectAdapters'];
  onStep?: HostEffectsOptions['onStep'];
}

export interface Host {
  supervisor: Supervisor;
  runtime: Runtime;
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
 * Throws `invalid_config` (a harness configuration or `approvals` does not parse; `path` names the
 * field, e.g. `harnesses.codex.driver`) or `env_missing` (a variable named in `envFrom` is not set)
 * before anything is opened or written.
 *
 * The Runtime opens first (its recovery marks jobs whose executor process is gone `abandoned`;
 * it never touches a live executor's jobs), so the supervisor's `reconciling` step can look up
 * every unknown dispatch before it serves.
 *
 * With `store` (many Hosts on PostgreSQL) the Runtime records its jobs in the cluster's job
 * registry as well (docs/many-hosts.md, "Jobs across Hosts"), so a Host taking a Task over finds
 * its dispatch by exact clientRequestId. The registry uses the Supervisor's journal, which exists
 * from the Supervisor's join to its stop: records the Runtime makes outside that time (recovery
 * at open, the stop of its jobs at `stop()`) are put when it next can, or not at all; a Host then
 * finds such a job still running under a stopped Host, which counts as its executor gone.
 */
export async function openHost(options: HostOptions): Promise<Host> {
  // Before anything opens: a bad harness configuration or a missing envFrom variable writes nothing.
  const harnesses = checkHostHarnesses(options.harnesses, options.approvals, process.env);
  const root = resolveStateRoot(options.state);
  // A file or an unreadable directory is refused by its code before the Runtime's LMDB tries it.
  try {
    checkStateRoot(root);
  } catch (error) {
    throw error instanceof StoreError ? hostErrorOf(error) : error;
  }
  const pool = createDriverPool({ maxThreads: options.maxThreads ?? 2 });
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
      ...(cluster ? { registry: journalJobRegistry(cluster.hostId, () => supervisor?.journal) } : {}),
    });
  } catch (error) {
    await pool.close();
    throw error;
  }
  const effects = createHostEffects({
    runtime,
    harnesses,
    ...(options.approvals ? { approvals: options.approvals } : {}),
    workspaces: join(root, 'workspaces'),
    ...(options.artifactContracts ? { artifactContracts: options.artifactContracts } : {}),
    ...(options.dropDispatchResponse ? { dropDispatchResponse: options.dropDispatchResponse } : {}),
    ...(options.onStep ? { onStep: options.onStep } : {}),
    ...(options.effectAdapters ? { effectAdapters: options.effectAdapters } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  supervisor = createSupervisor({ ...options, ...(cluster ? { cluster } : {}), state: root, effects });
  try {
    await supervisor.start();
  } catch (error) {
    await runtime.close().catch(() => undefined);
    await pool.close();
    throw error;
  }
  return {
    supervisor,
    runtime,
    pool,
    async stop(stopOptions = {}) {
      await supervisor.stop();
      await runtime.close(stopOptions);
      await pool.close();
    },
  };
}
