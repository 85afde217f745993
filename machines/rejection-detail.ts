import type { RevokedBy, StaleSource, VerificationCause } from './event-fields.js';
import type { TaskEvent } from './task-events.js';
import type { Rejection, RejectionReason, RequestState, TaskMachineContext } from './task-context.js';

/*
 * The reader's side of a rejection: the detail text a retained event's `lastRejection` carries,
 * and the few event readers the statechart's guards share with it. Pure; the codes themselves are
 * the statechart's (task-machine.ts), their meanings docs/errors.md's.
 */

export function generationOf(event: TaskEvent): number | undefined {
  return 'generation' in event ? event.generation : undefined;
}

/** What moved under the event's Context (the kernel re-validated its read set); empty when nothing did. */
export function staleOf(event: TaskEvent): StaleSource[] {
  return ('stale' in event && event.stale) || [];
}

const short = (value: string) => (value.startsWith('sha256:') ? value.slice(0, 19) : value);

/** `spec sha256:ab… → sha256:cd…; catalog (via spec)`: each moved source, for the reader. */
function describeStale(stale: readonly StaleSource[]): string {
  return stale
    .map((s) =>
      s.via !== undefined
        ? `${s.sourceId} (depends on ${s.via})`
        : `${s.sourceId} bound ${short(s.bound)}, now ${s.current === null ? 'gone' : short(s.current)}`,
    )
    .join('; ');
}

/** `revoked at r7 by assignment.commit (generation 2)`: what revoked a request, for the reader. */
function describeRevocation(by: RevokedBy): string {
  if (by.event === 'assignment.commit')
    return `revoked at r${by.revision} by assignment.commit (generation ${by.generation ?? '?'})`;
  if (by.event === 'request.revoke') return `revoked at r${by.revision} by request.revoke: ${by.reason ?? ''}`;
  return `revoked at r${by.revision} by an answer refused decision_stale${by.stale?.length ? ` (${describeStale(by.stale)})` : ''}`;
}

/** `frozen t.test.js bound sha256:ab…, now sha256:cd…; exit 1`: what failed a verification, for the reader. */
function describeVerification(causes: readonly VerificationCause[]): string | undefined {
  if (causes.length === 0) return undefined;
  return causes
    .map((c) => {
      if (c.kind === 'frozen')
        return `frozen test ${c.path} bound ${short(c.bound)}, now ${c.current === null ? (c.code ?? 'gone') : short(c.current)}`;
      if (c.kind === 'command')
        return c.exitCode === null ? `command ${c.jobState}, no exit code` : `exit ${c.exitCode}`;
      return `source ${c.before === null ? '-' : short(c.before)} → ${c.after === null ? '-' : short(c.after)}, Host ${short(c.host)}`;
    })
    .join('; ');
}

/** Why a decision was retained without being acted on, for the reader. */
function decisionDetail(
  context: TaskMachineContext,
  event: Extract<TaskEvent, { type: 'decision.submit' }>,
  reason: RejectionReason,
): string | undefined {
  const named = short(event.contextDigest);
  if (reason === 'context_mismatch') return `${named} is not a Context of this Task`;
  if (reason === 'superseded')
    return context.decision?.contextDigest === event.contextDigest
      ? `Context ${named} was already decided (${context.decision.candidateId})`
      : `Context ${named} was left; the current one is ${context.contextDigest ? short(context.contextDigest) : 'none'}`;
  if (reason === 'candidate_unknown') return `no candidate ${event.candidateId} in Context ${named}`;
  if (reason === 'untrusted_authority')
    return `candidate ${event.candidateId} is not supported by trusted sources only${event.ask ? '; a person is asked' : ''}`;
  return undefined;
}

/** The DecisionRequest an event names, if the Task has it. */
export function requestOf(context: TaskMachineContext, event: TaskEvent): RequestState | undefined {
  return 'requestId' in event && Object.hasOwn(context.requests, event.requestId)
    ? context.requests[event.requestId]
    : undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Why an answer to a DecisionRequest was refused, for the reader. */
function answerDetail(
  context: TaskMachineContext,
  event: Extract<TaskEvent, { type: 'request.answer' }>,
  reason: RejectionReason,
): string | undefined {
  const request = requestOf(context, event);
  if (reason === 'decision_unknown') return `no request ${event.requestId} on this Task`;
  if (!request) return undefined;
  if (reason === 'decision_not_pending')
    return request.status === 'answered' ? `already answered ${request.answer}` : `request is ${request.status}`;
  if (reason === 'decision_expired')
    return `expired at ${request.expiresAt === null ? 'its deadline' : iso(request.expiresAt)}, answered at ${iso(event.now)}`;
  if (reason === 'decision_revoked') return event.revokedBy ? describeRevocation(event.revokedBy) : undefined;
  if (reason === 'decision_stale')
    return staleOf(event).length
      ? describeStale(staleOf(event))
      : `bound to Context ${request.contextDigest ? short(request.contextDigest) : 'none'}; the Task is at ${context.contextDigest ? short(context.contextDigest) : 'none'}`;
  if (reason === 'answer_not_allowed') return `${event.answer} is not an answer request ${event.requestId} takes`;
  return undefined;
}

/** Required artifacts not held as evidence, or held with another digest than the proposal names. */
export function missingEvidence(context: TaskMachineContext, claimed: Record<string, string>): string[] {
  return context.requiredArtifacts.filter((name) => {
    const held = context.evidence[name];
    if (!held) return true;
    const digest = claimed[name];
    return digest !== undefined && digest !== held.digest;
  });
}

/** What was missing, mismatched or moved, for the reader (undefined when the code says it all). */
function rejectionDetail(context: TaskMachineContext, event: TaskEvent, reason: RejectionReason): string | undefined {
  const generation = generationOf(event) ?? context.generation;
  if (event.type === 'request.answer') return answerDetail(context, event, reason);
  if (reason === 'context_stale') return describeStale(staleOf(event));
  if (event.type === 'decision.submit') {
    if (reason === 'effect_unknown')
      return `Effect ${context.effect?.requestId} is unknown: only reconcile is taken, not ${event.action} (${event.candidateId})`;
    return decisionDetail(context, event, reason);
  }
  if (reason === 'missing_artifact' && event.type === 'completion.propose')
    return `missing ${missingEvidence(context, event.evidence).join(', ')}`;
  if (reason === 'context_mismatch' && 'contextDigest' in event)
    return `event names ${event.contextDigest}; current Context is ${context.contextDigest ?? 'none'}`;
  if (reason === 'harness_unknown' && event.type === 'assignment.commit')
    return `no harness named ${event.harness} is configured (configured: ${event.harnesses?.join(', ') || 'none'})`;
  if (reason === 'verification_failed' && event.type === 'verification.record')
    return describeVerification(event.causes ?? []);
  if (reason === 'stale_assignment') return `generation ${generation} < current ${context.generation}`;
  if (reason === 'identity_conflict' && event.type === 'dispatch.reconcile')
    return `${event.jobIds.length} jobs claim ${event.clientRequestId}`;
  if (reason === 'identity_conflict' && event.type === 'effect.reconcile')
    return `${event.receiptDigests.length} receipts under ${event.requestId}`;
  if (reason === 'identity_conflict' && event.type === 'effect.conflict') return event.reason;
  if (reason === 'effect_failed' && event.type === 'effect.fail') return `${event.code}: ${event.reason}`;
  if (reason === 'effect_endpoint_changed' && event.type === 'effect.refuse')
    return `${event.candidateId}: ${event.reason}`;
  if (reason === 'superseded' && event.type === 'branch.observe')
    return `child ${event.child} ended ${event.state} after ${context.branch?.branchId === event.branchId && context.branch.winners !== null ? 'the join' : 'its branch was left'}`;
  if (reason === 'join_unsatisfied' && event.type === 'branch.join') return event.reason;
  if (reason === 'action_failed' && event.type === 'action.record')
    return `${event.candidateId}: exit ${event.exitCode ?? 'none'}`;
  return undefined;
}

export function rejection(context: TaskMachineContext, event: TaskEvent, reason: RejectionReason): Rejection {
  const generation = generationOf(event) ?? context.generation;
  const detail = rejectionDetail(context, event, reason);
  return detail === undefined
    ? { event: event.type, reason, generation, revision: event.revision }
    : { event: event.type, reason, generation, revision: event.revision, detail };
}
