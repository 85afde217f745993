import type { InspectionEvent } from 'xstate';
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { zodIssue } from '../base/index.js';
import type { ExternalEventType, FrontierWork, TaskMachineContext } from '../machines/index.js';
import type { Clock } from './clock.js';
import type { ClusterOptions } from './cluster/cluster.js';
import type { FrontierRunner } from './frontier-runner.js';
import { FrontierRetryPolicy } from './frontier-retry.js';
import { RunLimits, type QueuedRun } from './run-queue.js';
import type { EventInputIn } from './event-input.js';
import { HostError } from './errors.js';
import type { ArtifactContracts, TaskSpec } from '../objects/index.js';
import type { ProgressListener, RecoveryMode } from '../recovery/index.js';

export interface SupervisorOptions {
  /**
   * State root directory; default `ORDIVON_STATE` or `./.ordivon`. With `store`, it holds this
   * Host's mirror of the Tasks it serves (one state root per Host process).
   */
  state?: string;
  /**
   * Open a state root whose mode lets other local accounts in (group or other bits), as it is,
   * changing no mode in it. Default `ORDIVON_ALLOW_SHARED_ROOT=1`; else such a root is refused
   * `state_root_shared` before anything is read or written (docs/service.md, "Other local accounts").
   */
  allowSharedRoot?: boolean | undefined;
  /**
   * `postgres://…`: share the Task history with other Hosts on one PostgreSQL database
   * (docs/many-hosts.md); each Task is served by the Host holding its lease. Default: the
   * embedded LMDB store of the state root alone.
   */
  store?: string | undefined;
  /** Lease and keeper settings with `store` (the URL itself is `store`). */
  cluster?: Omit<ClusterOptions, 'url'> | undefined;
  /** Wall and monotonic time, and the timers of DecisionRequest deadlines (default `systemClock`; `manualClock()` in tests). */
  clock?: Clock;
  /** XState inspection observer passed to the supervisor actor and every Task actor. */
  inspect?: (event: InspectionEvent) => void;
  /**
   * Performs frontier work (dispatch, verification, …); `openHost` supplies the Host's. Without
   * one, Tasks wait at their frontier. @internal
   */
  frontier?: FrontierRunner;
  /** zod schemas a Task spec may name as an artifact's `schema` (beside the built-in `json`). */
  artifactContracts?: ArtifactContracts;
  /** A Task whose stream reaches this many events gets a warning recorded in the store's meta (default 10,000). */
  streamWarnAt?: number;
  /** Written into the state root's lock file and named by the refusal a second opener gets (default `supervisor pid <pid>`). */
  purpose?: string;
  /** Boot validation: both verify every event; `checkpoint` (default) replays only the tails after checkpoints the chain matches, `full` replays every event (recovery/boot.ts). */
  recovery?: RecoveryMode;
  /**
   * While serving, a Task that has admitted this many events since its last checkpoint gets a new
   * one, taken right after the commit and written after it, off the admission path (default 100;
   * 0: only at boot and at a clean stop). After a crash, a checkpointed start then replays about
   * this many events per Task at most (plus any admitted while the checkpoint was being written),
   * like Akka Persistence's snapshot-every-N.
   */
  checkpointEvery?: number;
  /**
   * Called while `validating` with the running counts of the Tasks checked and events verified
   * (every 256 Tasks or 50,000 events per thread, and at the end): a full replay of a long
   * history takes seconds to minutes. A listener that throws does not stop the boot.
   */
  onBootProgress?: ProgressListener;
  /**
   * How frontier work that throws is retried (docs/api.md, "The frontier's retry policy"): at most
   * `attempts` tries in a row (default 8), the nth retry after `backoffMs` · 2^(n−1) (default 250)
   * up to `maxBackoffMs` (default 30,000); exhausted, the Task's work stops and an operator is asked
   * (the DecisionRequest `<task>/frontier/<work>/r<revision>`, answers `retry` and `cancel`).
   */
  frontierRetry?: { attempts?: number; backoffMs?: number; maxBackoffMs?: number } | undefined;
  /**
   * At most how many agent runs (the `dispatch` work of an Assignment) at once (docs/stages.md,
   * "Concurrency limits"): `runs` on this Host, `harnesses[name]` of one harness; a Task over a
   * limit waits in `assigned.ready`, nothing written, and is dispatched in the order its
   * Assignment became ready. Absent: no limit. `openHost` builds it from `concurrency.runs` and
   * each harness's `maxRuns`.
   */
  concurrency?: RunLimits | undefined;
  /**
   * The directory under which each Task Attempt gets its workspace, an absolute path (default
   * `<state>/workspaces`). On many Hosts, one directory every Host reads and writes (a shared
   * filesystem, the same path on each): a Task another Host takes over then finds its runs'
   * files, and a branch's parent the work of children other Hosts ran (docs/many-hosts.md,
   * "Workspaces").
   */
  workspaces?: string | undefined;
}

/** The scalar options, checked when a supervisor is created (`invalid_option` with the field). */
const ScalarOptions = z.object({
  allowSharedRoot: z.boolean().optional(),
  store: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// or postgresql:// URL')
    .optional(),
  cluster: z
    .object({
      hostId: z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'letters, digits, . _ : - (not first), at most 128')
        .optional(),
      leaseMs: z.number().int().min(100).optional(),
      renewEveryMs: z.number().int().min(10).optional(),
      statementTimeoutMs: z.number().int().min(10).optional(),
      connectTimeoutMs: z.number().int().min(10).optional(),
      advertisedUrl: z
        .string()
        .regex(/^https?:\/\/\S+$/, 'expected an http:// or https:// URL')
        .optional(),
      pollMs: z.number().int().min(10).optional(),
      notify: z.boolean().optional(),
      onLease: z
        .custom<(event: unknown) => void>((value) => typeof value === 'function', 'expected a function')
        .optional(),
    })
    .strict()
    .optional(),
  streamWarnAt: z.number().int().positive().optional(),
  recovery: z.enum(['full', 'checkpoint']).optional(),
  checkpointEvery: z.number().int().nonnegative().optional(),
  onBootProgress: z.custom<ProgressListener>((value) => typeof value === 'function', 'expected a function').optional(),
  frontierRetry: FrontierRetryPolicy.optional(),
  concurrency: RunLimits.optional(),
  workspaces: z.string().min(1).refine(isAbsolute, 'must be an absolute path').optional(),
});

export const DEFAULT_CHECKPOINT_EVERY = 100;

/** Throws `invalid_option` (with the field) for a scalar option that does not parse; touches nothing. */
export function checkSupervisorOptions(options: SupervisorOptions): void {
  const parsed = ScalarOptions.safeParse(options);
  if (!parsed.success) {
    const { code, path, message } = zodIssue('invalid_option', parsed.error);
    throw new HostError(code, `supervisor option ${path}: ${message}`, { path });
  }
}

/** A Task as `getTask` gives it: its revision, state, frontier work, statechart context and spec. */
export interface TaskView {
  taskId: string;
  revision: number;
  state: string;
  frontier: FrontierWork;
  context: TaskMachineContext;
  spec: TaskSpec;
  /**
   * Present only while the Task's dispatch waits for a run slot (`SupervisorOptions.concurrency`):
   * the limit it waits on and its place in line. The state stays `assigned.ready`; `show`, `list`
   * and the page call it `queued`.
   */
  queued?: QueuedRun;
}

/**
 * An event a caller may send to a Task with `Supervisor.send`: one of the external types
 * (`assignment.commit`, `completion.propose`, `decision.submit`, `request.answer`, `goal.revise`,
 * `task.cancel`) in the form callers write it (fields the kernel defaults may be left out), with
 * an optional `eventId`. The type only helps the caller: `send` parses the event again with zod.
 */
export type ExternalEvent = Extract<EventInputIn, { type: ExternalEventType }>;

export interface SendOptions {
  /** Idempotency key: a retried send with the same id is acknowledged without writing again. */
  eventId?: string;
}
