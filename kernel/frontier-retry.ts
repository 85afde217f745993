import { z } from 'zod';
import type { FrontierWork, TaskMachineContext } from '../machines/index.js';
import type { TaskHandle } from './frontier-runner.js';
import { REVOKED_WITH_CONTEXT, openDecisionRequest, type RequestOpener } from './requests/decision-requests.js';

/** The first retry of failed frontier work waits this long (`frontierRetry.backoffMs`'s default). */
export const FRONTIER_RETRY_MS = 250;
/** No retry waits longer (`frontierRetry.maxBackoffMs`'s default). */
export const FRONTIER_RETRY_CAP_MS = 30_000;
/** How many times in a row a piece of frontier work may fail before an operator is asked (`frontierRetry.attempts`'s default). */
export const FRONTIER_RETRY_ATTEMPTS = 8;

/**
 * How failed frontier work is retried (`SupervisorOptions.frontierRetry`): it is tried at most
 * `attempts` times in a row; after the nth failure short of that it waits `backoffMs` · 2^(n−1),
 * at most `maxBackoffMs`. Each field has its default.
 */
export const FrontierRetryPolicy = z
  .object({
    attempts: z.number().int().min(1).default(FRONTIER_RETRY_ATTEMPTS),
    backoffMs: z.number().int().min(0).default(FRONTIER_RETRY_MS),
    maxBackoffMs: z.number().int().min(0).default(FRONTIER_RETRY_CAP_MS),
  })
  .strict();
export type FrontierRetryPolicy = z.infer<typeof FrontierRetryPolicy>;

/** The wait before the next try of work that failed `failures` times in a row. */
export function frontierRetryDelay(policy: FrontierRetryPolicy, failures: number): number {
  // Past 2^52 the product is no longer exact; the cap is reached long before.
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** Math.min(Math.max(failures - 1, 0), 52));
}

/** A DecisionRequest as the Task's statechart context keeps it. */
type Asked = TaskMachineContext['requests'][string];

/** The answers to the question about exhausted frontier work. */
export const FRONTIER_RETRY_ANSWERS = ['retry', 'cancel'] as const;

/**
 * Work whose own job is to open a DecisionRequest: in its state the statechart takes any
 * `request.open` as that question (`escalating` → `held`), so exhausted it is not asked about but
 * retried every `maxBackoffMs`.
 */
const ASKS_ITSELF: readonly FrontierWork[] = ['escalate_effect', 'escalate_authority'];

/** Whether exhausted `work` is put to an operator (else it is retried every `maxBackoffMs`). */
export function askable(work: FrontierWork): boolean {
  return !ASKS_ITSELF.includes(work);
}

/**
 * The id of the question about `work` exhausted at the Task's `revision`: the same while the Task
 * does not move, so asking again after a restart names the same request.
 */
export function frontierRequestId(taskId: string, work: FrontierWork, revision: number): string {
  return `${taskId}/frontier/${work}/r${revision}`;
}

/**
 * The Task's latest question about its current frontier work, as its statechart context holds it
 * (so it survives a restart): `pending`, the work is not run; answered `cancel`, the Task is
 * cancelled; any other status, the work runs.
 */
export function frontierAsked(
  task: Pick<TaskHandle, 'taskId' | 'context'> & { frontier: FrontierWork },
): (Asked & { requestId: string }) | undefined {
  const prefix = `${task.taskId}/frontier/${task.frontier}/r`;
  let latest: (Asked & { requestId: string }) | undefined;
  let at = -1;
  for (const [requestId, held] of Object.entries(task.context.requests)) {
    if (!requestId.startsWith(prefix)) continue;
    const revision = Number(requestId.slice(prefix.length));
    if (Number.isInteger(revision) && revision > at) [latest, at] = [{ ...held, requestId }, revision];
  }
  return latest;
}

/** A failure as `<code>: <message>` (`error` when it has no code), at most 2,000 characters. */
export function failureCause(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return `${typeof code === 'string' ? code : 'error'}: ${message}`.slice(0, 2000);
}

/**
 * Opens the operator DecisionRequest `<task>/frontier/<work>/r<revision>` about `work` that failed
 * `failures` times in a row, naming the last failure's code and message. Resolves with whether the
 * Task has it now; opening an id the Task already has writes nothing.
 */
export function askAboutFailedWork(
  opener: RequestOpener,
  task: TaskHandle,
  { work, failures, error }: { work: FrontierWork; failures: number; error: unknown },
): Promise<boolean> {
  const cause = failureCause(error);
  return openDecisionRequest(opener, task, 'operator', {
    requestId: frontierRequestId(task.taskId, work, task.revision),
    pendingAction: `perform the Task's frontier work ${work} again`,
    participant: 'operator',
    alternatives: [
      { id: 'retry', summary: `try ${work} again, with its retries counted anew` },
      { id: 'cancel', summary: 'cancel the Task' },
    ],
    evidence: [`${work} failed ${failures} times in a row; the last failure: ${cause}`],
    unresolvedClaims: [`why ${work} fails, and whether it can succeed now`],
    consequence: `the Host performs ${work} again`,
    reversibility: 'unknown',
    authority: 'an operator of the Host',
    budgetImpact: `another try of ${work}`,
    revokedWhen: REVOKED_WITH_CONTEXT,
    costOfDelay: 'the Task waits at its frontier',
    allowed: [...FRONTIER_RETRY_ANSWERS],
    ttlMs: null,
  });
}
