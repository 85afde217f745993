import { join } from 'node:path';
import { createDriverPool, type DriverPool } from '../drivers/index.js';
import { createRuntime, type Runtime } from '../runtime/index.js';
import { resolveStateRoot } from '../store/index.js';
import { createHostEffects, type HostEffectsOptions } from './host-effects.js';
import { createSupervisor, type Supervisor, type SupervisorOptions } from './supervisor.js';

export interface HostOptions extends Omit<SupervisorOptions, 'effects'> {
  /** Harness name → how to launch it (driver, command, args, env). */
  harnesses: HostEffectsOptions['harnesses'];
  /** Driver pool threads (default 2). */
  maxThreads?: number;
  dropDispatchResponse?: HostEffectsOptions['dropDispatchResponse'];
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
 * The Runtime opens first (its recovery marks jobs whose executor process is gone `abandoned`;
 * it never touches a live executor's jobs), so the supervisor's `reconciling` step can look up
 * every unknown dispatch before it serves.
 */
export async function openHost(options: HostOptions): Promise<Host> {
  const root = resolveStateRoot(options.state);
  const pool = createDriverPool({ maxThreads: options.maxThreads ?? 2 });
  let runtime: Runtime;
  try {
    runtime = await createRuntime({
      root: join(root, 'runtime'),
      harness: (input, signal) => pool.run(input, { signal }),
    });
  } catch (error) {
    await pool.close();
    throw error;
  }
  const effects = createHostEffects({
    runtime,
    harnesses: options.harnesses,
    workspaces: join(root, 'workspaces'),
    ...(options.artifactContracts ? { artifactContracts: options.artifactContracts } : {}),
    ...(options.dropDispatchResponse ? { dropDispatchResponse: options.dropDispatchResponse } : {}),
    ...(options.onStep ? { onStep: options.onStep } : {}),
  });
  const supervisor = createSupervisor({ ...options, state: root, effects });
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
