import { DecisionArtifact, type CompiledCandidate, type Stage } from '../objects/index.js';
import { type TaskHandle, HostError, contextOf, REVOKED_WITH_CONTEXT, openDecisionRequest } from '../kernel/index.js';
import { clientRequestId, jobOf, type FrontierDeps } from './work-options.js';
import { performEffect, reconcileEffect } from './effect-actions.js';
import { untilAborted } from './until-aborted.js';
import { assignStageAgain } from './stage-retry.js';

/**
 * Decision stages (docs/context.md, "Decision stages"): the provider only chooses one of the candidates the Host compiled
 * into its Context, in an artifact; the Host admits the choice (exact Context, a known candidate,
 * trusted authority, nothing moved, not overtaken) and then performs the candidate's action itself.
 */

/**
 * `evaluate` of a decision stage not yet decided: submits the decision its provider wrote. Without
 * one held from this generation the stage settles naming it (the Task waits). Returns false when
 * the stage has been decided (the caller proposes or settles as for any stage).
 */
export async function submitStageDecision(deps: FrontierDeps, task: TaskHandle, stage: Stage): Promise<boolean> {
  const { context } = task;
  const decision = stage.decision;
  if (!decision || context.decision?.generation === context.generation) return false;
  const held = context.evidence[decision.artifact];
  if (!held || held.generation !== context.generation) {
    deps.step(task, `stage ${stage.name} settled without ${decision.artifact}: nothing to decide on`);
    await task.send({ type: 'evaluation.settle', generation: context.generation, missing: [decision.artifact] });
    return true;
  }
  // Retained only after its contract (`decision`) held, so it parses.
  const chosen = DecisionArtifact.parse(JSON.parse(task.store.getBlob(held.digest).toString('utf8')));
  const result = await task.send({
    type: 'decision.submit',
    contextDigest: chosen.contextDigest,
    candidateId: chosen.candidateId,
    rationale: chosen.rationale,
    decider: `${context.assignment!.harness} (${decision.artifact})`,
  });
  deps.step(
    task,
    result.admitted
      ? `decision ${chosen.candidateId} admitted: the Host acts on it`
      : `decision ${chosen.candidateId} refused: ${result.code}${result.detail ? ` (${result.detail})` : ''}`,
  );
  return true;
}

/** The admitted decision's candidate, from the Context it was admitted against. */
function admittedCandidate(task: TaskHandle): CompiledCandidate {
  const decision = task.context.decision!;
  const candidate = contextOf(task.store, task.taskId, decision.contextDigest)?.readSet?.candidates.find(
    (c) => c.id === decision.candidateId,
  );
  // The statechart admitted it as a candidate of that Context, so it is there.
  if (!candidate) throw new HostError('candidate_unknown', `no candidate ${decision.candidateId} in its Context`);
  return candidate;
}

/** The request about a candidate's authority: one per Assignment generation (a new one revokes it). */
export function authorityRequestId(task: Pick<TaskHandle, 'taskId' | 'context'>): string {
  const { attempt, generation } = task.context;
  return `${task.taskId}/a${attempt}/g${generation}/authority`;
}

/**
 * `escalate_authority`: the provider chose a candidate resting on sources that are not trusted,
 * on a stage that puts such a choice to a person. The request names the candidate, its action and
 * each untrusted source; it is bound to the Context the choice was made against, so an answer
 * after a trusted source moved is `decision_stale` and the stage reruns. `approve` performs the
 * candidate, `refuse` leaves the Task waiting.
 */
export async function askAuthority(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const asked = task.context.asked!;
  const candidate = contextOf(task.store, task.taskId, asked.contextDigest)?.readSet?.candidates.find(
    (c) => c.id === asked.candidateId,
  );
  // The statechart held it as a candidate of that Context, so it is there.
  if (!candidate) throw new HostError('candidate_unknown', `no candidate ${asked.candidateId} in its Context`);
  const untrusted = candidate.supportedBy.filter((s) => s.trust !== 'trusted');
  const sources = untrusted.length ? untrusted.map((s) => s.sourceId).join(', ') : 'no source';
  await openDecisionRequest(deps, task, 'authority', {
    requestId: authorityRequestId(task),
    pendingAction: `perform candidate ${candidate.id} (${candidate.summary}): ${describeAction(candidate)}`,
    participant: 'operator',
    alternatives: [
      { id: 'approve', summary: `perform ${candidate.id} on the authority of the answer` },
      { id: 'refuse', summary: 'perform nothing; the Task waits for a new Assignment' },
    ],
    evidence: [`decision ${asked.digest}`, `Context ${asked.contextDigest}`],
    unresolvedClaims: untrusted.map((s) => `what ${s.sourceId} says (${s.trust})`),
    consequence: `the Host performs what only ${sources} support${untrusted.length === 1 ? 's' : ''}`,
    reversibility: 'unknown',
    authority: 'a person who can vouch for the untrusted sources',
    budgetImpact: 'none known',
    revokedWhen: REVOKED_WITH_CONTEXT,
    costOfDelay: 'the Task waits',
    allowed: ['approve', 'refuse'],
    candidate: { id: candidate.id, untrustedSources: untrusted },
    ttlMs: null,
  });
}

/** A candidate's action in words, for the person asked. */
function describeAction(candidate: CompiledCandidate): string {
  const { action } = candidate;
  if (action.kind === 'command') return [action.command, ...action.args].join(' ');
  if (action.kind === 'effect') return `${action.operation} ${action.target} through ${action.adapter}`;
  return action.kind;
}

/**
 * `act`: performs the admitted candidate's action. A command runs as a Runtime job in the
 * workspace under a deterministic request id, found again rather than run twice if the process
 * dies before the result is recorded; an Effect goes through its adapter (effect-actions.ts); a
 * `reconcile` looks the unknown Effect up; `none` runs nothing.
 */
export async function act(deps: FrontierDeps, task: TaskHandle, signal: AbortSignal): Promise<void> {
  const { context } = task;
  const candidate = admittedCandidate(task);
  const record = { type: 'action.record', generation: context.generation, candidateId: candidate.id };
  const { action } = candidate;
  if (action.kind === 'effect') return performEffect(deps, task, { ...candidate, action });
  if (action.kind === 'reconcile' && context.effect?.status === 'unknown') return reconcileEffect(deps, task);
  if (action.kind !== 'command') {
    // `none`; `reconcile` or `abandon` with no unknown Effect (the statechart refuses `abandon` of one).
    deps.step(task, `candidate ${candidate.id}: no action to perform`);
    await task.send({ ...record, jobId: null, exitCode: null, ok: true });
    return;
  }
  const { command, args, timeoutMs } = action;
  const requestId = clientRequestId(task.taskId, context.attempt, context.generation, 'action');
  const workspace = await deps.workspaceOf(task);
  const jobId = await jobOf(deps, requestId, () =>
    deps.options.runtime.dispatch({
      clientRequestId: requestId,
      workspace,
      run: { kind: 'command', command, args },
      timeoutMs,
    }),
  );
  deps.step(task, `performing ${candidate.id}: ${[command, ...args].join(' ')} as ${requestId}`);
  const job = await untilAborted(deps.options.runtime.observe(jobId, { signal }), signal);
  const exitCode = job.exitCode ?? null;
  deps.step(task, `${candidate.id} ended ${job.state} (exit ${exitCode ?? 'none'})`);
  await task.send({ ...record, jobId, exitCode, ok: job.state === 'succeeded' && exitCode === 0 });
}

/**
 * How many times in a row the Host reruns a stage whose Context moved before it settles the Task
 * to wait for a new Assignment: a trusted source that moves under every run would otherwise buy
 * provider runs without end.
 */
export const MAX_CONSECUTIVE_RERUNS = 3;

/** `context_stale` refusals since the last Assignment sent from outside the Host. */
function staleSinceLastAssignment(task: TaskHandle): number {
  let stale = 0;
  for (const { event } of task.store.stream(task.taskId)) {
    if (event.type === 'assignment.commit' && event.origin === 'external') stale = 0;
    if (!event.disposition.admitted && event.disposition.code === 'context_stale') stale++;
  }
  return stale;
}

/**
 * `rerun`: a trusted source the Assignment's Context read moved before its work was admitted, so
 * the same stage runs again on the same harness under the next generation, compiled at the
 * current revisions — at most `MAX_CONSECUTIVE_RERUNS` times in a row.
 */
export async function rerun(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const { context } = task;
  const stale = staleSinceLastAssignment(task);
  if (stale > MAX_CONSECUTIVE_RERUNS) {
    deps.step(task, `the Context moved under ${stale} runs in a row: not rerun; the Task waits for a new Assignment`);
    await task.send({ type: 'evaluation.settle', generation: context.generation });
    return;
  }
  const { result, stage } = await assignStageAgain(task);
  deps.step(
    task,
    `Context moved under generation ${context.generation}: ${stage} runs again as generation ${context.generation + 1}` +
      (result.admitted ? '' : ` (refused: ${result.code})`),
  );
}
