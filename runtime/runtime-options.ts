import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { ConfinementLimits, ConfinementMode } from './confinement.js';
import type { HarnessExecutor } from './harness-job.js';
import type { JobRegistry } from './job-registry.js';

/** Milliseconds since the epoch, like `Date.now`. Injected so tests control recorded timestamps. */
export type Clock = () => number;

/** Options of `createRuntime`, parsed with zod (functions are checked for being functions). */
export const RuntimeOptions = z.strictObject({
  /** Directory of the Runtime's own state; its LMDB file is `<root>/runtime.lmdb`. */
  root: z
    .string()
    .min(1)
    .refine((p) => isAbsolute(p), 'must be an absolute path'),
  /** A label for this executor; defaults to `<hostname>:<pid>:<process start ticks>`. */
  executorId: z.string().min(1).max(256).optional(),
  harness: z.custom<HarnessExecutor>((v) => typeof v === 'function', 'must be a function').optional(),
  clock: z.custom<Clock>((v) => typeof v === 'function', 'must be a function').default(() => Date.now),
  /** Run `recover()` while opening. */
  recover: z.boolean().default(true),
  /** Default grace between SIGTERM and SIGKILL of a job's process group. */
  graceMs: z.number().int().nonnegative().default(2_000),
  /** How long to wait for a killed group to disappear (orphans wait for init to reap them). */
  reapTimeoutMs: z.number().int().positive().default(10_000),
  /** Output bytes per stream that go into the stdout/stderr digest. */
  captureCapBytes: z
    .number()
    .int()
    .positive()
    .default(16 << 20),
  /** Bytes of each stream's end kept in the record. */
  tailBytes: z
    .number()
    .int()
    .nonnegative()
    .max(1 << 20)
    .default(4_096),
  /** Files walked when listing workspace changes; beyond it the list is marked truncated. */
  maxWorkspaceEntries: z.number().int().positive().default(50_000),
  /**
   * Where the jobs of every Host sharing a cluster are recorded (runtime/job-registry.ts): each job
   * record this Runtime makes durable is put there too, and jobs of other Hosts are found there.
   */
  registry: z
    .custom<JobRegistry>(
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        typeof (v as JobRegistry).hostId === 'string' &&
        ['put', 'find', 'get', 'alive'].every((name) => typeof (v as Record<string, unknown>)[name] === 'function'),
      'must be a JobRegistry (hostId, put, find, get, alive)',
    )
    .optional(),
  /**
   * How every job's process is confined (docs/threat-model.md): `bwrap` (default) or `none`, which
   * runs them unconfined and says so on every receipt. `bwrap` where it cannot be had fails
   * `createRuntime` with `confinement_unavailable`.
   */
  confinement: ConfinementMode.default('bwrap'),
  /** Resource limits of each confined process tree (defaults in docs/threat-model.md). */
  limits: ConfinementLimits.default({}),
  /**
   * Absolute paths no confined process may see, even when a run's `readable` or `writable` names
   * them (the Host passes its state root). The Runtime's own root is always among them.
   */
  hidden: z.array(z.string().refine((p) => isAbsolute(p), 'must be an absolute path')).default([]),
  /** Poll interval of `observe` for jobs run by another live Runtime process or another live Host. */
  foreignPollMs: z.number().int().positive().default(250),
});
export type RuntimeOptions = z.infer<typeof RuntimeOptions>;
export type RuntimeOptionsIn = z.input<typeof RuntimeOptions>;
