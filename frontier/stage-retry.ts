import { stageRetry, type Stage } from '../objects/index.js';
import {
  type SendResult,
  type TaskHandle,
  REVOKED_WITH_CONTEXT,
  openDecisionRequest,
  realTimer,
} from '../kernel/index.js';
import type { FrontierDeps } from './work-options.js';
import { untilAborted } from './until-aborted.js';

/** The answers a person gives when a stage's automatic retries are exhausted. */
export const RETRY_ANSWERS = ['retry', 'settle'] as const;

/** The request asking a person about a stage stopped more often than its retry policy allows: one per generation. */
export function retryRequestId(task: Pick<TaskHandle, 'taskId' | 'context'>): string {
  const { attempt, generation } = task.context;
  return `${task.taskId}/a${attempt}/g${generation}/retry`;
}

/**
 * Whether the Task waits for a person to answer its current generation's retry request (its
 * stage's automatic retries are exhausted): it rests in `evaluating` until then.
 */
export function retryAsked(task: Pick<TaskHandle, 'taskId' | 'context'>): boolean {
  return task.context.requests[retryRequestId(task)]?.status === 'pending';
}

/**
 * What the Task's events say about runs the Host stopped (their job `abandoned`: a drain, a
 * crash, another Host gone), counted since the last Assignment sent from outside the Host: the
 * retry count lives in the journal, so a Host that dies mid-backoff keeps it.
 */
function stoppedRuns(task: TaskHandle): { count: number; current: { at: string } | undefined } {
  let count = 0;
  let current: { at: string } | undefined;
  for (const { event } of task.store.stream(task.taskId)) {
    if (event.type === 'assignment.commit' && event.origin === 'external') count = 0;
    if (event.type !== 'run.observe' || !event.disposition.admitted) continue;
    const stopped = event.data.jobStatus === 'abandoned';
    if (stopped) count++;
    if (event.data.generation === task.context.generation) current = stopped ? { at: event.at } : undefined;
  }
  return { count, current };
}

/**
 * Whether the previous generation's run was stopped by the Host (its job observed `abandoned`):
 * what it did before the stop is this run's to take up, even what the Host never saw it finish.
 */
export function previousRunStopped(task: TaskHandle): boolean {
  const previous = task.context.generation - 1;
  let stopped = false;
  for (const { event } of task.store.stream(task.taskId))
    if (event.type === 'run.observe' && event.disposition.admitted && event.data.generation === previous)
      stopped = event.data.jobStatus === 'abandoned';
  return stopped;
}

/**
 * Commits the next generation of the current Assignment: the same stage on the same harness with
 * the same instructions, so its run gets a new clientRequestId (never the old one sent again).
 */
export async function assignStageAgain(task: TaskHandle): Promise<{ result: SendResult; stage: string }> {
  const { context } = task;
  const assignment = context.assignment!;
  const body = task.store.getObject<{ stage?: string; purpose: string; instructions: string }>(
    assignment.digest,
    'assignment',
  ).body;
  const result = await task.send({
    type: 'assignment.commit',
    harness: assignment.harness,
    generation: context.generation + 1,
    ...(body.stage !== undefined ? { stage: body.stage } : { purpose: body.purpose }),
    instructions: body.instructions,
  });
  return { result, stage: body.stage ?? body.purpose };
}

/**
 * `evaluate` of a stage whose run the Host stopped (docs/stages.md, "Retries"): within the stage's
 * `retry.max`, waits out `retry.backoffMs` from the stopped run's observation (on the Host's clock,
 * so a restart waits only what is left) and dispatches the stage again under the next generation.
 * Beyond it, opens the DecisionRequest `<task>/a<attempt>/g<generation>/retry` and waits for its
 * answer: `retry` dispatches again, `settle` (or an expired or revoked request) lets the stage
 * settle as any run without its artifacts. Returns false when the run was not stopped by the Host,
 * or a person chose to settle (the caller evaluates the stage as usual).
 */
export async function retryStoppedRun(
  deps: FrontierDeps,
  task: TaskHandle,
  stage: Stage,
  signal: AbortSignal,
): Promise<boolean> {
  const { count, current } = stoppedRuns(task);
  if (current === undefined) return false;
  const policy = stageRetry(stage);
  const requestId = retryRequestId(task);
  const asked = task.context.requests[requestId];
  if (asked?.status === 'pending') return true;
  if (asked !== undefined && asked.answer !== 'retry') return false;
  if (asked === undefined && count > policy.max) {
    deps.step(task, `run of stage ${stage.name} stopped by the Host ${count} times (retry.max ${policy.max}): asking`);
    await openDecisionRequest(deps, task, 'operator', {
      requestId,
      pendingAction: `dispatch stage ${stage.name} again under generation ${task.context.generation + 1}`,
      participant: 'operator',
      alternatives: [
        { id: 'retry', summary: `dispatch stage ${stage.name} again under a new generation` },
        { id: 'settle', summary: 'let the stage settle without its artifacts; the Task waits for a new Assignment' },
      ],
      evidence: [`${count} runs of the stage stopped by the Host (job abandoned)`],
      unresolvedClaims: ['why the runs did not finish before the Host stopped them'],
      consequence: `another provider run of stage ${stage.name}`,
      reversibility: 'unknown',
      authority: 'a person who may spend another provider run',
      budgetImpact: 'one provider run',
      revokedWhen: REVOKED_WITH_CONTEXT,
      costOfDelay: 'the Task waits',
      allowed: [...RETRY_ANSWERS],
      ttlMs: null,
    });
    return true;
  }
  if (asked === undefined && policy.backoffMs > 0) {
    const left = Date.parse(current.at) + policy.backoffMs - Date.parse(deps.clock.wall());
    if (left > 0) {
      deps.step(task, `run of stage ${stage.name} stopped by the Host: retrying in ${left} ms`);
      let cancel: () => void = () => undefined;
      const due = new Promise<void>((resolve) => (cancel = (deps.clock.setTimer ?? realTimer)(left, resolve)));
      try {
        await untilAborted(due, signal);
      } finally {
        cancel();
      }
    }
  }
  const { result, stage: name } = await assignStageAgain(task);
  deps.step(
    task,
    `run of stage ${name} stopped by the Host: dispatched again as generation ${task.context.generation + 1}` +
      (asked ? ' (a person answered retry)' : ` (retry ${count} of ${policy.max})`) +
      (result.admitted ? '' : ` (refused: ${result.code})`),
  );
  return true;
}
