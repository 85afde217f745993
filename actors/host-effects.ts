import type { DriverKind, DriverRunInput } from '../drivers/receipt.js';
import type { FrontierWork } from '../machines/index.js';
import { createWorkspace, readArtifact, sourceDigest, type JobRecord, type Runtime } from '../runtime/index.js';
import { digestOf } from '../store/index.js';
import { checkArtifact } from '../objects/index.js';
import { compileContext } from './context-compiler.js';
import type { EffectRunner, TaskHandle } from './effects.js';
import { HostError } from './errors.js';

/** How to launch one harness: which driver speaks to it, and the process to start. */
export interface HarnessConfig {
  driver: DriverKind;
  command: string;
  args?: string[];
  env?: Record<string, string>;
  model?: string;
  timeoutMs?: number;
}

/** Chooses the launch configuration per Assignment (e.g. a scripted provider's behaviour per purpose). */
export type HarnessFactory = (assignment: {
  taskId: string;
  generation: number;
  purpose: string;
  workspace: string;
}) => HarnessConfig | Promise<HarnessConfig>;

export interface HostEffectsOptions {
  runtime: Runtime;
  /** Harness name (as named by `assignment.commit`) → launch configuration. */
  harnesses: Record<string, HarnessConfig | HarnessFactory>;
  /** Root under which each Task Attempt gets its workspace. */
  workspaces: string;
  /** Fault injection for tests and the demo: drop the Runtime's response to this dispatch. */
  dropDispatchResponse?: (task: TaskHandle) => boolean;
  /** Called with each step the Host takes, for progress output. */
  onStep?: (taskId: string, step: string) => void;
  maxArtifactBytes?: number;
}

/** Deterministic per Task Attempt, Assignment generation and purpose: the same intent always gets the same id. */
export function clientRequestId(taskId: string, attempt: number, generation: number, what: 'run' | 'verify'): string {
  return `${taskId}/a${attempt}/g${generation}/${what}`;
}

/**
 * The Host's frontier work (DESIGN §5, invariants 1–5), performed after each commit:
 *
 * - `compile_context`: compile and commit the Context before any provider runs;
 * - `dispatch`: persist the intent with its clientRequestId, then call the Runtime; a response
 *   that does not come back makes the dispatch `unknown` (never a blind redispatch);
 * - `reconcile`: look the job up by that exact id: one → running, none → stays unknown, more →
 *   blocked (`identity_conflict`);
 * - `observe_run`: wait for the job, keep the receipt, validate the artifacts this run changed
 *   and retain the valid ones as evidence;
 * - `evaluate`: a `diagnose` Assignment settles (the Task waits); any other proposes completion,
 *   which the statechart admits only with every required artifact held;
 * - `verify`: run the acceptance command as a Runtime job, recompute the source digest and the
 *   frozen test digests on the Host, and commit the outcome only if all agree.
 *
 * Every step is idempotent: if the process dies anywhere, boot derives the same step from the
 * committed state and the Runtime answers a repeated dispatch with the job it already has.
 */
export function createHostEffects(options: HostEffectsOptions): EffectRunner {
  const step = (task: TaskHandle, text: string) => options.onStep?.(task.taskId, text);
  const workspaceOf = (task: TaskHandle) =>
    createWorkspace({
      root: options.workspaces,
      taskId: task.taskId,
      attempt: task.context.attempt,
      ...(task.spec.workspaceSeed ? { seedFrom: task.spec.workspaceSeed } : {}),
    });
  const artifactNames = (task: TaskHandle) => task.spec.requiredArtifacts.map((a) => a.name);

  async function compile(task: TaskHandle): Promise<void> {
    const workspace = await workspaceOf(task);
    const compiled = compileContext(
      task.store,
      task.spec,
      task.context,
      await sourceDigest(workspace, { exclude: artifactNames(task) }),
    );
    step(task, `context compiled for generation ${task.context.generation} (${compiled.body.sources.length} sources)`);
    await task.send(
      { type: 'context.compile', generation: task.context.generation, contextDigest: compiled.digest },
      { objects: [{ kind: 'context', body: compiled.body }] },
    );
  }

  async function dispatch(task: TaskHandle): Promise<void> {
    const { context } = task;
    const assignment = context.assignment!;
    const configured = options.harnesses[assignment.harness];
    const requestId = clientRequestId(task.taskId, context.attempt, context.generation, 'run');
    if (!configured) {
      // Nothing is intended or started: the Task stays ready until it is reassigned to a known harness.
      step(task, `no harness named ${assignment.harness} is configured; reassign the Task`);
      throw new HostError('harness_unknown', `no harness named ${assignment.harness}`);
    }
    const workspace = await workspaceOf(task);
    const harness =
      typeof configured === 'function'
        ? await configured({
            taskId: task.taskId,
            generation: context.generation,
            purpose: assignment.purpose,
            workspace,
          })
        : configured;
    const intended = await task.send({
      type: 'dispatch.intend',
      generation: context.generation,
      clientRequestId: requestId,
    });
    if (!intended.written) return;
    const prompt = task.store.getObject<{ prompt: string }>(context.contextDigest!, 'context').body.prompt;
    const input: DriverRunInput = {
      driver: harness.driver,
      runId: requestId,
      command: harness.command,
      args: harness.args ?? [],
      env: harness.env ?? {},
      cwd: workspace,
      prompt,
      contextDigest: context.contextDigest!,
      timeoutMs: harness.timeoutMs ?? 600_000,
      graceMs: 2_000,
      expectedArtifacts: artifactNames(task),
      maxArtifactBytes: options.maxArtifactBytes ?? 1 << 20,
      policy: { approvals: 'accept' },
      ...(harness.model ? { model: harness.model } : {}),
    };
    step(task, `dispatching ${assignment.purpose} to ${assignment.harness} as ${requestId}`);
    let jobId: string | undefined;
    try {
      jobId = (
        await options.runtime.dispatch({
          clientRequestId: requestId,
          workspace,
          run: { kind: 'harness', input },
          timeoutMs: input.timeoutMs + input.graceMs + 5_000,
        })
      ).jobId;
    } catch (error) {
      step(task, `dispatch failed: ${(error as Error).message}`);
    }
    if (jobId === undefined || options.dropDispatchResponse?.(task)) {
      step(task, `no response to ${requestId}: dispatch is unknown`);
      await task.send({ type: 'dispatch.lost', clientRequestId: requestId });
      return;
    }
    await task.send({ type: 'dispatch.ack', clientRequestId: requestId, jobId });
  }

  async function reconcile(task: TaskHandle): Promise<void> {
    const requestId = task.context.dispatch!.clientRequestId;
    const jobs = await options.runtime.findJobs({ clientRequestId: requestId });
    step(task, `reconciling ${requestId}: ${jobs.length} job(s) found`);
    if (jobs.length === 0) return; // stays unknown: never redispatched blindly
    await task.send({ type: 'dispatch.reconcile', clientRequestId: requestId, jobIds: jobs.map((j) => j.jobId) });
  }

  async function observe(task: TaskHandle, signal: AbortSignal): Promise<void> {
    const { context } = task;
    const dispatch = context.dispatch!;
    let job: JobRecord;
    try {
      job = await untilAborted(options.runtime.observe(dispatch.jobId!, { signal }), signal);
    } catch (error) {
      if (signal.aborted && (signal.reason as { code?: string })?.code === 'stale_assignment') {
        // Fenced by a newer Assignment: its result could only be retained as stale, so stop it.
        step(task, `run ${dispatch.jobId} superseded by a newer generation: cancelling it`);
        await options.runtime.cancel(dispatch.jobId!).catch(() => undefined);
      }
      throw error;
    }
    const workspace = await workspaceOf(task);
    const receipt = job.harness?.receipt ?? missingReceipt(job, context.contextDigest!);
    step(task, `run ${job.jobId} ended ${job.state} (${receipt.stopReason})`);
    const changed = new Map((job.files?.changed ?? []).map((f) => [f.name, f.digest]));
    const objects: Array<{ kind: string; body: unknown }> = [{ kind: 'receipt', body: receipt }];
    const blobs: Buffer[] = [];
    const claims: Array<{ kind: 'evidence'; key: string }> = [];
    const evidence: Record<string, string> = {};
    const refused: Record<string, string> = {};
    const refuse = (name: string, why: string) => {
      refused[name] = why;
      step(task, `${name} not retained: ${why}`);
    };
    for (const required of task.spec.requiredArtifacts) {
      if (!changed.has(required.name)) continue; // only what this run produced counts as its evidence
      const read = readArtifact(workspace, required.name, options.maxArtifactBytes ?? 1 << 20);
      if (!read.ok) {
        refuse(required.name, `${read.code}: ${read.detail}`);
        continue;
      }
      if (read.value.digest !== changed.get(required.name)) {
        // The bytes must be the ones the Runtime saw when the run ended, not a later edit.
        refuse(required.name, 'changed after the run ended');
        continue;
      }
      const checked = checkArtifact(required.schema, read.value.bytes);
      if (!checked.ok) {
        refuse(required.name, `invalid ${required.schema}: ${checked.detail}`);
        continue;
      }
      const body = {
        taskId: task.taskId,
        generation: context.generation,
        name: required.name,
        schema: required.schema,
        digest: read.value.digest,
        bytes: read.value.bytes.length,
      };
      objects.push({ kind: 'evidence', body });
      claims.push({ kind: 'evidence', key: digestOf({ kind: 'evidence', body }) });
      blobs.push(read.value.bytes);
      evidence[required.name] = read.value.digest;
    }
    step(task, `evidence retained: ${Object.keys(evidence).join(', ') || 'none'}`);
    await task.send(
      {
        type: 'run.observe',
        generation: dispatch.generation,
        clientRequestId: dispatch.clientRequestId,
        contextDigest: context.contextDigest!,
        receiptDigest: digestOf({ kind: 'receipt', body: receipt }),
        jobStatus: job.state,
        evidence,
        ...(Object.keys(refused).length > 0 ? { refused } : {}),
        sourceDigest: await sourceDigest(workspace, { exclude: artifactNames(task) }),
      },
      { objects, blobs, claims },
    );
  }

  async function evaluate(task: TaskHandle): Promise<void> {
    const { context } = task;
    if (context.assignment?.purpose === 'diagnose') {
      await task.send({ type: 'evaluation.settle', generation: context.generation });
      return;
    }
    const evidence = Object.fromEntries(Object.entries(context.evidence).map(([name, held]) => [name, held.digest]));
    const result = await task.send({
      type: 'completion.propose',
      generation: context.generation,
      contextDigest: context.contextDigest!,
      evidence,
      proposer: `host:${context.assignment?.harness}`,
      summary: 'proposed by the Host from the evidence it holds',
    });
    step(
      task,
      result.admitted
        ? 'completion proposed and admitted: verifying'
        : `completion proposal rejected: ${result.code}${result.detail ? ` (${result.detail})` : ''}`,
    );
  }

  async function verify(task: TaskHandle, signal: AbortSignal): Promise<void> {
    const { context, spec } = task;
    const acceptance = spec.acceptance;
    const workspace = await workspaceOf(task);
    const exclude = artifactNames(task);
    if (!acceptance)
      throw new HostError('invalid_spec', `task ${task.taskId} declares no acceptance command; it cannot be verified`);
    const requestId = clientRequestId(task.taskId, context.attempt, context.generation, 'verify');
    const existing = await options.runtime.findJobs({ clientRequestId: requestId });
    const jobId =
      existing[0]?.jobId ??
      (
        await options.runtime.verify({
          clientRequestId: requestId,
          workspace,
          command: acceptance.command,
          args: acceptance.args,
          frozenTests: acceptance.frozenTests,
          sourceExclude: exclude,
          timeoutMs: acceptance.timeoutMs,
        })
      ).jobId;
    step(task, `acceptance verification running as ${requestId}`);
    const job = await untilAborted(options.runtime.observe(jobId, { signal }), signal);
    const reported = job.verification;
    const hostDigest = await sourceDigest(workspace, { exclude });
    const frozen = await frozenDigests(workspace, acceptance.frozenTests);
    const pinned = acceptance.frozenTestDigests ?? {};
    const frozenIntact = acceptance.frozenTests.every(
      (t) => frozen[t] !== undefined && frozen[t] === pinned[t] && reported?.frozenTestDigests[t] === pinned[t],
    );
    const passed =
      job.state === 'succeeded' &&
      reported?.passed === true &&
      reported.sourceDigest === hostDigest &&
      reported.sourceDigestAfter === hostDigest &&
      frozenIntact;
    const verification = {
      taskId: task.taskId,
      generation: context.generation,
      jobId: job.jobId,
      exitCode: reported?.exitCode ?? null,
      passed,
      sourceDigest: hostDigest,
      frozenTestDigests: Object.fromEntries(
        Object.entries(frozen).filter((e): e is [string, string] => e[1] !== undefined),
      ),
      frozenTestsIntact: frozenIntact,
    };
    const verificationDigest = digestOf({ kind: 'verification', body: verification });
    const objects: Array<{ kind: string; body: unknown }> = [{ kind: 'verification', body: verification }];
    let outcomeDigest: string | null = null;
    if (passed) {
      const evidence = Object.fromEntries(Object.entries(context.evidence).map(([name, held]) => [name, held.digest]));
      const completionName = spec.requiredArtifacts.find((a) => a.schema === 'completion')?.name;
      const result =
        completionName && evidence[completionName]
          ? JSON.parse(task.store.getBlob(evidence[completionName]).toString('utf8'))
          : null;
      const outcome = {
        taskId: task.taskId,
        attempt: context.attempt,
        generation: context.generation,
        evidence,
        sourceDigest: hostDigest,
        verification: verificationDigest,
        result,
      };
      objects.push({ kind: 'outcome', body: outcome });
      outcomeDigest = digestOf({ kind: 'outcome', body: outcome });
    }
    step(
      task,
      passed
        ? `verification passed (exit ${verification.exitCode}, source ${hostDigest.slice(0, 19)}…)`
        : `verification failed (exit ${verification.exitCode}, frozen tests intact: ${frozenIntact})`,
    );
    await task.send(
      {
        type: 'verification.record',
        generation: context.generation,
        passed,
        verificationDigest,
        sourceDigest: hostDigest,
        outcomeDigest,
      },
      { objects },
    );
  }

  return {
    async perform(task: TaskHandle, work: FrontierWork, signal: AbortSignal): Promise<void> {
      switch (work) {
        case 'compile_context':
          return compile(task);
        case 'dispatch':
          return dispatch(task);
        case 'confirm_dispatch':
          return void (await task.send({
            type: 'dispatch.lost',
            clientRequestId: task.context.dispatch!.clientRequestId,
          }));
        case 'reconcile':
          return reconcile(task);
        case 'observe_run':
          return observe(task, signal);
        case 'evaluate':
          return evaluate(task);
        case 'verify':
          return verify(task, signal);
        case 'none':
          return;
      }
    },
  };
}

/** Settles with `promise`, or rejects with the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => (signal.removeEventListener('abort', onAbort), resolve(value)),
      (error: unknown) => (signal.removeEventListener('abort', onAbort), reject(error)),
    );
  });
}

/** sha256 of each frozen test file as it is now, read through the workspace confinement. */
async function frozenDigests(workspace: string, paths: string[]): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const path of paths) {
    const read = readArtifact(workspace, path, 16 << 20);
    out[path] = read.ok ? read.value.digest : undefined;
  }
  return out;
}

/** A receipt for a job that ended without a driver result (abandoned, executor failure). */
function missingReceipt(job: JobRecord, contextDigest: string) {
  const at = job.endedAt ?? job.updatedAt;
  return {
    driver: job.run.kind === 'harness' ? job.run.driver : ('command' as const),
    runId: job.clientRequestId,
    provider: { name: 'unknown' },
    contextDigest,
    jobId: job.jobId,
    artifacts: [],
    artifactRefusals: [],
    counts: { messages: 0, thoughts: 0, toolItemsStarted: 0, toolItemsCompleted: 0, protocolErrors: 0 },
    stopReason: job.state === 'abandoned' ? 'abandoned' : (job.error?.code ?? job.state),
    timings: {
      startedAt: job.startedAt ?? job.createdAt,
      endedAt: at,
      durationMs: Math.max(0, Date.parse(at) - Date.parse(job.startedAt ?? job.createdAt)),
    },
  };
}
