import { type DecisionRequestObject, OBJECT_KINDS, type RequestAbout } from '../../objects/index.js';
import { digestOf } from '../../store/index.js';
import type { TaskHandle } from '../frontier-runner.js';
import type { SendResult } from '../send-result.js';
import type { Clock } from '../clock.js';
import { contextOf } from '../compiled-contexts.js';

/**
 * DecisionRequests (docs/decision-requests.md): a durable question to a person or a
 * policy. The request object (pending action, alternatives, evidence, consequence, authority,
 * world revision, expiry, …) is written with the `request.open` event that makes it pending, so
 * nobody is shown a request that a crash could lose; answers go through the Task's `send`
 * (`request.answer`), where the statechart refuses any answer that comes too late.
 */

/** What revokes a request bound to the Task's Context before it is answered, in words. */
export const REVOKED_WITH_CONTEXT = ['a new Assignment generation', 'a trusted source of the bound Context moves'];

/** What the opener says; the Host adds the Task, generation, bound Context and world revision, and the deadline. */
export type RequestInput = Omit<
  DecisionRequestObject,
  'taskId' | 'generation' | 'contextDigest' | 'worldRevision' | 'expiresAt' | 'about'
> & {
  /** How long an answer is taken; null or absent: no deadline. */
  ttlMs?: number | null;
  /**
   * Bind the answer to the Task's current Context (default true). A permission request is not: it
   * outlives the Assignment that asked it, and its answer is for the next one.
   */
  bindContext?: boolean;
};

/** What opening a request needs of its caller (the frontier work, or the Supervisor for an operator). */
export interface RequestOpener {
  readonly clock: Clock;
  /** Reports a step the Host takes (`onStep`). */
  step(task: TaskHandle, text: string): void;
}

/**
 * Opens the DecisionRequest `requestId` (a deterministic id: the same question asked again, after a
 * restart or a replayed provider request, names the same request) bound to the Task's current
 * Context and the trusted sources it read. Opening an id the Task already has writes nothing.
 * Returns whether the request is (now) the Task's.
 */
export async function openDecisionRequest(
  ctx: RequestOpener,
  task: TaskHandle,
  about: RequestAbout,
  input: RequestInput,
): Promise<boolean> {
  if (Object.hasOwn(task.context.requests, input.requestId)) return true;
  return (await sendRequestOpen(ctx, task, about, input)).written;
}

/**
 * Writes the request object and its `request.open` in one commit, and answers how the Task took
 * it (a Task that takes no more events refuses it, writing nothing). The caller has checked that
 * the Task has no request `requestId`.
 */
export async function sendRequestOpen(
  ctx: RequestOpener,
  task: TaskHandle,
  about: RequestAbout,
  { ttlMs, bindContext = true, ...input }: RequestInput,
): Promise<SendResult> {
  const { context } = task;
  const bound = bindContext ? context.contextDigest : null;
  const readSet = context.contextDigest
    ? contextOf(task.store, task.taskId, context.contextDigest)?.readSet
    : undefined;
  const worldRevision = (readSet?.items ?? [])
    .filter((item) => item.trust === 'trusted' && item.location)
    .map((item) => ({ sourceId: item.sourceId, digest: item.digest }));
  const now = Date.parse(ctx.clock.wall());
  const expiresAt = ttlMs == null ? null : now + ttlMs;
  const body = OBJECT_KINDS['decision-request'].parse({
    ...input,
    taskId: task.taskId,
    generation: context.generation,
    about,
    contextDigest: bound,
    worldRevision,
    expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString(),
  });
  const result = await task.send(
    {
      type: 'request.open',
      requestId: input.requestId,
      requestDigest: digestOf({ kind: 'decision-request', body }),
      generation: context.generation,
      about,
      contextDigest: bound,
      expiresAt,
    },
    { objects: [{ kind: 'decision-request', body }] },
  );
  ctx.step(
    task,
    result.written
      ? `decision request ${input.requestId} opened for ${input.participant}: ${input.pendingAction}`
      : `decision request ${input.requestId} not opened: ${result.code}`,
  );
  return result;
}
