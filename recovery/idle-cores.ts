import { availableParallelism, cpus } from 'node:os';

/** Workers when none are asked for: the available parallelism (at most 8) when a core is idle now, else 1 (taken as none). */
export async function defaultWorkers(idle: () => Promise<number>): Promise<number> {
  const cores = Math.min(availableParallelism(), 8);
  // One sample can catch a passing burst (another process's GC, the kernel flushing pages): a
  // machine that looks busy is sampled once more before the whole history goes to one thread. In
  // a bench run (2026-12-01, 2 vCPU Xeon) one boot of two took 16.4 s instead of 10.2 s this way.
  return (await idle()) >= 1 || (await idle()) >= 1 ? cores : 1;
}

/**
 * Cores not busy with other processes over the next `sampleMs`: the machine's idle CPU time (from
 * `os.cpus()`) plus this process's own CPU time over the window, divided by the time. This
 * process's own work counts as idle because it is what the workers would take over: the warm
 * recovery workers load their modules during this very sample (`rebuildParallel` starts them
 * first), and counted as busy they made a quiet 2-core machine look full, so the history went to
 * one thread.
 */
export async function idleCores(sampleMs = 50, probe: IdleProbe = SYSTEM_IDLE): Promise<number> {
  const started = probe.now();
  const before = probe.idleMs() + probe.ownMs();
  await probe.wait(sampleMs);
  const elapsed = probe.now() - started;
  return elapsed > 0 ? Math.max(0, probe.idleMs() + probe.ownMs() - before) / elapsed : 0;
}

/** What `idleCores` reads: the machine's idle CPU time summed over cores, this process's CPU time (every thread), a clock, a wait (all in ms). */
export interface IdleProbe {
  idleMs(): number;
  ownMs(): number;
  now(): number;
  wait(ms: number): Promise<void>;
}

const SYSTEM_IDLE: IdleProbe = {
  idleMs: () => cpus().reduce((sum, cpu) => sum + cpu.times.idle, 0),
  ownMs: () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  },
  now: () => performance.now(),
  wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
