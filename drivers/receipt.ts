import { z } from 'zod';
import { RUN_STEPS_MAX, RunStep } from './run-steps.js';
import { RunPolicy } from './permission-policy.js';
import { PermissionRecord } from './permission-route.js';
import { EnvName } from './env-name.js';
import { LoopRunConfig } from './loop/loop-config.js';

/**
 * What the Host hands a driver for one provider run. Plain data: it crosses a worker-thread
 * boundary, so it is parsed with zod on the worker side too.
 */
export const DriverKind = z.enum(['codex', 'acp', 'command', 'loop']);
export type DriverKind = z.infer<typeof DriverKind>;

export { EnvName };

const AbsolutePath = z.string().refine((p) => p.startsWith('/'), 'must be an absolute path');

/**
 * What a harness or a verification may reach besides its workspace (the configuration's `network`,
 * `readable` and `writable`): stored with the run, turned into a sandbox by the Runtime.
 */
export const ConfinementRequest = z.strictObject({
  network: z.enum(['host', 'none']),
  readable: z.array(AbsolutePath).default([]),
  writable: z.array(AbsolutePath).default([]),
});
export type ConfinementRequest = z.infer<typeof ConfinementRequest>;

/** The sandbox one process runs in (os/ `Sandbox`), as the Runtime built it for this run. */
export const SandboxSpec = z.strictObject({
  workspace: AbsolutePath,
  network: z.enum(['host', 'none']),
  readable: z.array(AbsolutePath),
  writable: z.array(AbsolutePath),
  hidden: z.array(AbsolutePath),
  limits: z.strictObject({
    memoryBytes: z.number().int().positive(),
    processes: z.number().int().positive(),
    fileSizeBytes: z.number().int().positive(),
    openFiles: z.number().int().positive(),
  }),
  user: z.strictObject({ uid: z.number().int().nonnegative(), gid: z.number().int().nonnegative() }).optional(),
  /** The Runtime job it runs for: marked on bwrap's command line, so a recovery finds it (os/job-sandboxes.ts). */
  jobId: z
    .string()
    .regex(/^[A-Za-z0-9_]+$/)
    .optional(),
});
export type SandboxSpec = z.infer<typeof SandboxSpec>;

export const DriverRunInput = z.object({
  driver: DriverKind,
  /** The Host's deterministic id for this run (the Dispatch clientRequestId). */
  runId: z.string().min(1),
  /** How to launch the provider process: a real one (`codex app-server`, `hermes acp`) or a scripted one. */
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  /**
   * Names of variables whose values are read from the environment of the thread that spawns the
   * provider, at spawn time (`resolveEnvFrom`): secrets travel through the Host and the Runtime as
   * names only, so no job record or event can hold their values. A name must not also be in `env`.
   * The pool's worker resolves them (`resolveEnvFrom`); a driver function called directly gets
   * exactly `env`.
   */
  envFrom: z.array(EnvName).default([]),
  /** Absolute path of the Task Attempt's workspace; the provider's cwd and the only place artifacts are read from. */
  cwd: z.string().min(1),
  /** The compiled Context rendered as the provider's prompt. */
  prompt: z.string(),
  contextDigest: z.string().min(1),
  /** Runtime job this run belongs to, when the Runtime dispatched it. */
  jobId: z.string().optional(),
  model: z.string().optional(),
  /** The run's one deadline: its driver stops the provider this long after the run starts (drivers/run-deadline.ts). */
  timeoutMs: z.number().int().positive(),
  /**
   * When set, the driver also stops the provider once this long passes without progress from the
   * agent (any output or protocol message; failure code `heartbeat_timeout`). Absent: no
   * heartbeat, only the deadline.
   */
  heartbeatMs: z.number().int().positive().optional(),
  /** Grace after a polite stop (`turn/interrupt`, `session/cancel`) before the process tree is killed. */
  graceMs: z.number().int().nonnegative().default(2_000),
  /** Workspace-relative names of the artifacts to look for when the run ends. */
  expectedArtifacts: z.array(z.string().min(1)).default([]),
  maxArtifactBytes: z
    .number()
    .int()
    .positive()
    .default(1 << 20),
  /**
   * ACP only: offer the agent the client's confined `fs/read_text_file` / `fs/write_text_file`.
   * Off for agents that mishandle them (gemini-cli 0.61 cannot create a file through them) or
   * that should use the disk themselves; the driver then refuses `fs/*` requests as unknown methods.
   * Absent means true (what every run did before the field existed).
   */
  clientFs: z.boolean().optional(),
  /**
   * Codex only: the sandbox its tool commands run in (`thread/start.sandbox`; default
   * `workspace-write`). `danger-full-access` lifts it, for commands the sandbox refuses.
   */
  sandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).optional(),
  /**
   * How provider approval / permission requests are answered (docs/permissions.md): by default
   * `route`d through the evidence-rich policy, with no kinds forbidden and no grants.
   */
  policy: RunPolicy.default({ approvals: 'route', forbid: [], grants: [] }),
  /** What the harness may reach besides its workspace, from its configuration (absent: network `host`, nothing more). */
  confinement: ConfinementRequest.optional(),
  /**
   * Loop v0 only (driver `loop`): its model endpoint and budgets from the harness, and where the
   * Host has it keep its log, under which Assignment generation.
   */
  loop: LoopRunConfig.optional(),
  /**
   * The sandbox the provider process is started in, set by the Runtime as it runs the job (never
   * stored with the run). Absent: the provider runs unconfined, and its receipt says `confined: false`.
   */
  confinedIn: SandboxSpec.optional(),
});
export type DriverRunInput = z.infer<typeof DriverRunInput>;
export type DriverRunInputIn = z.input<typeof DriverRunInput>;

export const ArtifactFound = z.object({
  name: z.string(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  bytes: z.number().int().nonnegative(),
});
export type ArtifactFound = z.infer<typeof ArtifactFound>;

/**
 * Evidence of one provider run. Never Task truth: the Host decides what it means.
 * `usage` is kept exactly as the protocol reported it (shape differs per protocol).
 * `stopReason` is the provider's own (`completed`, `interrupted`, `failed` for Codex turns;
 * `end_turn`, `cancelled`, `max_tokens`, … for ACP) or one set by the driver:
 * `timeout`, `heartbeat_timeout`, `aborted`, `process_exited`, `protocol_error`, `spawn_failed`, `driver_crashed`.
 */
export const HarnessRunReceipt = z.object({
  driver: DriverKind,
  runId: z.string(),
  provider: z.object({ name: z.string(), version: z.string().optional() }),
  model: z.string().optional(),
  protocolVersion: z.string().optional(),
  sessionId: z.string().optional(),
  threadId: z.string().optional(),
  turnId: z.string().optional(),
  contextDigest: z.string(),
  jobId: z.string().optional(),
  artifacts: z.array(ArtifactFound),
  /** Artifacts that were expected but refused (escape, symlink, size) with the refusal code. */
  artifactRefusals: z.array(z.object({ name: z.string(), code: z.string() })).default([]),
  usage: z.unknown().optional(),
  counts: z.object({
    messages: z.number().int().nonnegative(),
    thoughts: z.number().int().nonnegative(),
    toolItemsStarted: z.number().int().nonnegative(),
    toolItemsCompleted: z.number().int().nonnegative(),
    protocolErrors: z.number().int().nonnegative(),
  }),
  stopReason: z.string(),
  exitCode: z.number().int().nullable().optional(),
  signal: z.string().nullable().optional(),
  finalText: z.string().optional(),
  /** What the agent said and did, in order, where its protocol reports it (ACP, Codex); bounded (drivers/run-steps.ts). */
  steps: z.array(RunStep).max(RUN_STEPS_MAX).optional(),
  /** Steps past `RUN_STEPS_MAX`, counted but not kept. */
  stepsOmitted: z.number().int().positive().optional(),
  /** The provider's permission requests and how the run's policy answered each (absent: none asked). */
  permissions: z.array(PermissionRecord).optional(),
  /** Whether the provider ran in a sandbox (absent in receipts written before confinement). */
  confined: z.boolean().optional(),
  timings: z.object({
    startedAt: z.string(),
    endedAt: z.string(),
    durationMs: z.number().nonnegative(),
  }),
});
export type HarnessRunReceipt = z.infer<typeof HarnessRunReceipt>;

export const DriverFailureKind = z.enum([
  'timeout',
  'aborted',
  'spawn_failed',
  'process_exited',
  'protocol_error',
  'provider_error',
  'driver_crashed',
  'driver_unavailable',
  'invalid_input',
]);
export type DriverFailureKind = z.infer<typeof DriverFailureKind>;

/**
 * Job records written before failures carried a `code` hold only the `kind`; it stands in as the
 * code, so those records still parse (the detail is never read for one).
 */
function withLegacyCode(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const result = value as Record<string, unknown>;
  return result['ok'] === false && result['code'] === undefined ? { ...result, code: result['kind'] } : value;
}

/**
 * A driver never throws across the pool boundary: it returns one of these (cf. execa `reject: false`).
 * A failure says what happened as fields: `kind` is the coarse, documented class callers branch on
 * (with its default retryability), `code` the specific failure (`acp_timeout`, `worker_died`, …),
 * `path` the offending input field when a parse failed, and `detail` is for people only.
 */
export const DriverResult = z.preprocess(
  withLegacyCode,
  z.discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), receipt: HarnessRunReceipt }),
    z.object({
      ok: z.literal(false),
      kind: DriverFailureKind,
      code: z.string().min(1),
      retryable: z.boolean(),
      detail: z.string(),
      path: z.string().optional(),
      /** What was observed before the failure, when anything was. */
      receipt: HarnessRunReceipt.optional(),
    }),
  ]),
);
export type DriverResult = z.infer<typeof DriverResult>;
