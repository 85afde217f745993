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
 * Cores idle over the next `sampleMs` (the machine's idle CPU time from `os.cpus()`, divided by
 * the time): this thread is waiting meanwhile, so what it measures is everything else.
 */
export async function idleCores(sampleMs = 50, probe: IdleProbe = SYSTEM_IDLE): Promise<number> {
  const started = probe.now();
  const before = probe.idleMs();
  await probe.wait(sampleMs);
  const elapsed = probe.now() - started;
  return elapsed > 0 ? Math.max(0, probe.idleMs() - before) / elapsed : 0;
}

/** What `idleCores` reads: the machine's idle CPU time summed over cores, a clock, a wait (all in ms). */
export interface IdleProbe {
  idleMs(): number;
  now(): number;
  wait(ms: number): Promise<void>;
}

const SYSTEM_IDLE: IdleProbe = {
  idleMs: () => cpus().reduce((sum, cpu) => sum + cpu.times.idle, 0),
  now: () => performance.now(),
  wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
