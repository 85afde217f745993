import { z } from 'zod';
import { DriverKind, DriverResult } from '../drivers/receipt.js';

/** `sha256:<64 hex>`, the digest form used across Ordivon. */
export const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

export const JobState = z.enum(['starting', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'abandoned']);
export type JobState = z.infer<typeof JobState>;

export const TERMINAL_STATES: ReadonlySet<JobState> = new Set<JobState>([
  'succeeded',
  'failed',
  'timed_out',
  'cancelled',
  'abandoned',
]);

/** True when no further transition of the job can happen. */
export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.has(state);
}

/** Who ran the job: a label plus the process identity recovery checks (from the OS via os/, not LMDB). */
export const ExecutorIdentity = z.object({
  executorId: z.string().min(1),
  hostname: z.string(),
  bootId: z.string(),
  pid: z.number().int().positive(),
  /** Process start time in clock ticks since boot (os/ `processStartTicks`); 0 when unknown. */
  startTicks: z.number().int().nonnegative(),
});
export type ExecutorIdentity = z.infer<typeof ExecutorIdentity>;

/** What was read from one output stream. The digest covers the first `capturedBytes` bytes. */
export const OutputEvidence = z.object({
  bytes: z.number().int().nonnegative(),
  capturedBytes: z.number().int().nonnegative(),
  digest: Digest,
  truncated: z.boolean(),
  /** The last bytes of the stream as UTF-8 (lossy), bounded. */
  tail: z.string(),
});
export type OutputEvidence = z.infer<typeof OutputEvidence>;

export const FileChange = z.object({
  name: z.string(),
  kind: z.enum(['file', 'symlink']),
  bytes: z.number().int().nonnegative(),
  /** Content digest for files; digest of the link target string for symlinks. */
  digest: Digest,
});
export type FileChange = z.infer<typeof FileChange>;

/** Workspace files created or modified (and names deleted) between dispatch and the end of the job. */
export const FilesEvidence = z.object({
  changed: z.array(FileChange),
  deleted: z.array(z.string()),
  /** True when the walk stopped at its file limit; the lists are then incomplete. */
  truncated: z.boolean(),
});
export type FilesEvidence = z.infer<typeof FilesEvidence>;

/** The Runtime's view of an acceptance run; the Host recomputes the digests before trusting it. */
export const Verification = z.object({
  exitCode: z.number().int().nullable(),
  passed: z.boolean(),
  /** `sourceDigest()` of the workspace taken before the command ran. */
  sourceDigest: Digest,
  /** Taken after the command ended; differs when the run modified source. */
  sourceDigestAfter: Digest.nullable(),
  frozenTestDigests: z.record(z.string(), Digest.nullable()),
  /** Frozen tests that could not be read, with the confine refusal code. */
  frozenTestRefusals: z.record(z.string(), z.string()),
  /** Whether the command ran in a sandbox (absent in records written before confinement). */
  confined: z.boolean().optional(),
});
export type Verification = z.infer<typeof Verification>;

/** The run as stored: environment values and prompts are not persisted (names and digests only). */
export const StoredRun = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('command'),
    command: z.string(),
    args: z.array(z.string()),
    envKeys: z.array(z.string()),
  }),
  z.object({
    kind: z.literal('verify'),
    command: z.string(),
    args: z.array(z.string()),
    envKeys: z.array(z.string()),
    frozenTests: z.array(z.string()),
    sourceInclude: z.array(z.string()).optional(),
    sourceExclude: z.array(z.string()),
  }),
  z.object({
    kind: z.literal('harness'),
    driver: DriverKind,
    runId: z.string(),
    command: z.string(),
    args: z.array(z.string()),
    envKeys: z.array(z.string()),
    /** The run's `envFrom`: names of variables read where the provider is spawned (never their values). */
    envFrom: z.array(z.string()).optional(),
    contextDigest: z.string(),
    promptDigest: Digest,
    model: z.string().optional(),
    timeoutMs: z.number().int().positive(),
    expectedArtifacts: z.array(z.string()),
  }),
]);
export type StoredRun = z.infer<typeof StoredRun>;

/** Why the Runtime itself ended a job, when it did. */
export const StopReason = z.enum(['timeout', 'cancel', 'executor_gone', 'runtime_closed']);
export type StopReason = z.infer<typeof StopReason>;

/** Job ids are ASCII so `['request', id, '\uffff']` bounds every index range. */
export const JobId = z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/);

/** One job as stored in the Runtime's `jobs` database (key: jobId). Parsed on every read. */
export const JobRecord = z.object({
  v: z.literal(1),
  jobId: JobId,
  clientRequestId: z.string().min(1),
  workspace: z.string(),
  run: StoredRun,
  timeoutMs: z.number().int().positive(),
  graceMs: z.number().int().nonnegative(),
  executorId: z.string().min(1),
  executor: ExecutorIdentity,
  state: JobState,
  createdAt: z.string(),
  updatedAt: z.string(),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  /**
   * The process group leader; its pid is the group id. For a command job, the command; for a
   * harness job, the provider, as the driver pool reported it right after the spawn.
   */
  process: z.object({ pid: z.number().int().positive(), startTicks: z.number().int().nonnegative() }).optional(),
  exitCode: z.number().int().nullable().optional(),
  signal: z.string().nullable().optional(),
  stopReason: StopReason.optional(),
  /** False when some process of the group was still alive when the record was written, or could not be checked. */
  groupGone: z.boolean().optional(),
  /**
   * Set when another Host recorded the job `abandoned` because the Host that ran it stopped
   * heartbeating (runtime/job-registry.ts): its processes are on that Host's machine, so they were
   * neither checked nor stopped from here (`groupGone: false`).
   */
  abandonedBy: z.object({ hostId: z.string(), detail: z.string() }).optional(),
  stdout: OutputEvidence.optional(),
  stderr: OutputEvidence.optional(),
  files: FilesEvidence.optional(),
  harness: DriverResult.optional(),
  verification: Verification.optional(),
  /** A failure of the Runtime's own making (`spawn_failed`, `harness_threw`, …), as data. */
  error: z.object({ code: z.string(), detail: z.string(), path: z.string().optional() }).optional(),
});
export type JobRecord = z.infer<typeof JobRecord>;

/** The fixed format version of the Runtime's LMDB environment. */
export const RUNTIME_FORMAT = 1;
