import { resolve } from 'node:path';
import type { DriverRunInput } from '../drivers/receipt.js';
import { harnessJobTimeoutMs, LOOP_PROVIDER, LoopRunConfig } from '../drivers/index.js';
import { type TaskHandle, HostError, contextOf, assignedStage } from '../kernel/index.js';
import { DEFAULT_APPROVALS, runApprovals, type HarnessConfig } from './harness-config.js';
import { clientRequestId, type FrontierDeps } from './work-options.js';
import { runGrants } from './permission-requests.js';
import { previousRunStopped } from './stage-retry.js';
import { branchKind, openBranch, parentLets } from './branch.js';

/**
 * `dispatch`: persists the intent with its clientRequestId, then calls the Runtime; a response
 * that does not come back makes the dispatch `unknown`, reconciled by that id (never a blind
 * redispatch). If the process dies after the intent and before the response is recorded, boot
 * makes it `unknown` and `reconcileRun` looks the job up.
 */
export async function dispatchRun(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const { context } = task;
  const assignment = context.assignment!;
  const branch = branchKind(task, assignedStage(task));
  if (branch) return openBranch(deps, task, branch);
  if (!(await parentLets(deps, task))) return;
  const requestId = clientRequestId(task.taskId, context.attempt, context.generation, 'run');
  const { workspace, harness } = await harnessOf(deps, task);
  const intended = await task.send({
    type: 'dispatch.intend',
    generation: context.generation,
    clientRequestId: requestId,
  });
  if (!intended.written) return;
  const input = runInput(deps, task, harness, requestId, workspace);
  deps.step(task, `dispatching ${assignment.purpose} to ${assignment.harness} as ${requestId}`);
  await dispatchToRuntime(deps, task, requestId, workspace, input);
}

/** The Assignment's harness configuration (a factory asked) and the workspace its run gets; refuses what cannot be dispatched. */
async function harnessOf(deps: FrontierDeps, task: TaskHandle): Promise<{ workspace: string; harness: HarnessConfig }> {
  const { context } = task;
  const assignment = context.assignment!;
  const configured = deps.options.harnesses[assignment.harness];
  if (!configured) {
    // Nothing is intended or started: the Task stays ready until it is reassigned to a known harness.
    deps.step(task, `no harness named ${assignment.harness} is configured; reassign the Task`);
    throw new HostError('harness_unknown', `no harness named ${assignment.harness}`);
  }
  const workspace = await deps.workspaceOf(task);
  const harness =
    typeof configured === 'function'
      ? await configured({
          taskId: task.taskId,
          generation: context.generation,
          purpose: assignment.purpose,
          stage: assignedStage(task).name,
          contextDigest: context.contextDigest!,
          workspace,
        })
      : configured;
  const budget = assignedStage(task).budget;
  if ((budget?.tokens !== undefined || budget?.turns !== undefined) && harness.driver !== 'loop') {
    // Only Loop v0 can stop between model calls; another driver would spend past the budget unseen.
    deps.step(task, `stage ${assignedStage(task).name} has a token or turn budget: assign it to a loop harness`);
    throw new HostError(
      'budget_unsupported',
      `stage ${assignedStage(task).name}'s budget.tokens and budget.turns bind only a harness of driver loop, not ${harness.driver}`,
    );
  }
  return { workspace, harness };
}

/** What the driver is asked to run: the harness's command, the prompt, its deadline, policy and confinement. */
function runInput(
  deps: FrontierDeps,
  task: TaskHandle,
  harness: HarnessConfig,
  requestId: string,
  workspace: string,
): DriverRunInput {
  const prompt = promptOf(task);
  const budget = assignedStage(task).budget;
  return {
    driver: harness.driver,
    runId: requestId,
    // The loop starts no process: its provider name stands where a command would.
    command: harness.command ?? LOOP_PROVIDER,
    args: harness.args ?? [],
    env: harness.env ?? {},
    // Names only: the driver pool's worker reads the values when it spawns the provider.
    envFrom: harness.envFrom ?? [],
    cwd: workspace,
    prompt,
    contextDigest: task.context.contextDigest!,
    // The run's one deadline: the driver keeps it; the pool's watchdog and the job's timeout derive from it.
    // The stage's budget.wallMs, when it is tighter than the harness's.
    timeoutMs: Math.min(harness.timeoutMs ?? 600_000, budget?.wallMs ?? Infinity),
    ...(harness.heartbeatMs !== undefined ? { heartbeatMs: harness.heartbeatMs } : {}),
    graceMs: 2_000,
    expectedArtifacts: deps.stageArtifacts(task),
    maxArtifactBytes: deps.options.maxArtifactBytes ?? 1 << 20,
    policy: {
      ...runApprovals(harness.approvals ?? deps.options.approvals ?? DEFAULT_APPROVALS),
      grants: grantsOfRun(task),
    },
    ...(harness.model ? { model: harness.model } : {}),
    ...(harness.clientFs !== undefined ? { clientFs: harness.clientFs } : {}),
    ...(harness.sandbox !== undefined ? { sandbox: harness.sandbox } : {}),
    ...(harness.loop !== undefined
      ? {
          loop: LoopRunConfig.parse({
            ...harness.loop,
            logDir: deps.loopLogOf(task),
            generation: task.context.generation,
            conversation: assignedStage(task).name,
            ...(previousRunStopped(task) ? { continuesStopped: true } : {}),
            ...(budget?.turns !== undefined ? { stageMaxTurns: budget.turns } : {}),
            ...(budget?.tokens !== undefined ? { stageMaxTokens: budget.tokens } : {}),
          }),
        }
      : {}),
    // A factory's configuration is not checked by openHost: its relative paths resolve here alike.
    confinement: {
      network: harness.network ?? 'host',
      readable: (harness.readable ?? []).map((p) => resolve(p)),
      writable: (harness.writable ?? []).map((p) => resolve(p)),
    },
  };
}

/** Calls the Runtime once: `dispatch.ack` with the job id, or `dispatch.lost` when no response came back. */
async function dispatchToRuntime(
  deps: FrontierDeps,
  task: TaskHandle,
  requestId: string,
  workspace: string,
  input: DriverRunInput,
): Promise<void> {
  let jobId: string | undefined;
  try {
    jobId = (
      await deps.options.runtime.dispatch({
        clientRequestId: requestId,
        workspace,
        run: { kind: 'harness', input },
        timeoutMs: harnessJobTimeoutMs(input),
      })
    ).jobId;
  } catch (error) {
    deps.step(task, `dispatch failed: ${(error as Error).message}`);
  }
  if (jobId === undefined) {
    deps.step(task, `no response to ${requestId}: dispatch is unknown`);
    await task.send({ type: 'dispatch.lost', clientRequestId: requestId });
    return;
  }
  await task.send({ type: 'dispatch.ack', clientRequestId: requestId, jobId });
}

/** The grants the current Context records, for the run's permission policy. */
function grantsOfRun(task: TaskHandle) {
  const body = contextOf(task.store, task.taskId, task.context.contextDigest!)?.readSet;
  return body ? runGrants(task.store, task.context, body) : [];
}

/** The prompt of the current Context: its own object, or inside a Context written before read sets. */
function promptOf(task: TaskHandle): string {
  const { promptDigest, contextDigest } = task.context;
  if (promptDigest) return task.store.getObject<{ text: string }>(promptDigest, 'prompt').body.text;
  return task.store.getObject<{ prompt: string }>(contextDigest!, 'context').body.prompt;
}

/**
 * `reconcile`: looks the job up by the dispatch's exact clientRequestId: one → running, more →
 * blocked (`identity_conflict`). None: no job ever started under the id, since the Runtime records
 * a job (in the job registry too, on many Hosts) before it spawns anything. The same request is
 * then dispatched again under the same id, which is not blind: the Runtime starts at most one job
 * per clientRequestId (a unique index in the registry), so this call either starts it or answers
 * the job a late dispatcher got in first with; a request that differs from that job's is
 * `idempotency_conflict`, and the next try finds the job.
 */
export async function reconcileRun(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const requestId = task.context.dispatch!.clientRequestId;
  const jobs = await deps.options.runtime.findJobs({ clientRequestId: requestId });
  deps.step(task, `reconciling ${requestId}: ${jobs.length} job(s) found`);
  let jobIds = jobs.map((j) => j.jobId);
  if (jobIds.length === 0) {
    const { workspace, harness } = await harnessOf(deps, task);
    const input = runInput(deps, task, harness, requestId, workspace);
    deps.step(task, `no job was ever started as ${requestId}: dispatching it under that id`);
    const { jobId } = await deps.options.runtime.dispatch({
      clientRequestId: requestId,
      workspace,
      run: { kind: 'harness', input },
      timeoutMs: harnessJobTimeoutMs(input),
    });
    jobIds = [jobId];
  }
  await task.send({ type: 'dispatch.reconcile', clientRequestId: requestId, jobIds });
}
