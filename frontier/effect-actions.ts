import { z } from 'zod';
import { isCodedError } from '../base/index.js';
import { OBJECT_KINDS, type CompiledCandidate } from '../objects/index.js';
import { digestOf } from '../store/index.js';
import { type TaskHandle, HostError, REVOKED_WITH_CONTEXT, openDecisionRequest } from '../kernel/index.js';
import { clientRequestId, type FrontierDeps } from './work-options.js';
import type { EffectAdapter } from './effect-adapter.js';

/**
 * External Effects (docs/effects.md): an operation the Host does not own (a ledger
 * write, a deployment, a message), possibly not idempotent, performed through an adapter the
 * embedder registers. The rules are the Runtime dispatch's, for someone else's system:
 * the intent and its request id are durable before the adapter is called; an answer that does not
 * come back makes the Effect `unknown`; an unknown Effect is reconciled by looking its request id
 * up — never by performing it again.
 */

export type { EffectAdapter, EffectTarget } from './effect-adapter.js';

/** Receipts are kept as objects, so they must be JSON. */
const Receipt = z.json();
const Receipts = z.array(Receipt);

function adapterOf(deps: FrontierDeps, task: TaskHandle, name: string): EffectAdapter {
  const adapter = deps.options.effectAdapters?.[name];
  if (!adapter) {
    deps.step(task, `no Effect adapter named ${name} is registered; nothing is performed`);
    throw new HostError('effect_adapter_unknown', `no Effect adapter named ${name} (openHost({ effectAdapters }))`);
  }
  return adapter;
}

/** An adapter's answer as JSON, or `effect_answer_invalid` naming what does not parse. */
function parsed<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new HostError('effect_answer_invalid', `${what}: ${result.error.issues[0]?.message}`);
  return result.data;
}

const receiptObject = (task: TaskHandle, requestId: string, via: 'perform' | 'lookup', receipt: unknown) => {
  const body = OBJECT_KINDS['effect-receipt'].parse({ taskId: task.taskId, requestId, via, receipt });
  return { body, digest: digestOf({ kind: 'effect-receipt', body }) };
};

/**
 * `act` for an `effect` candidate: commits the intent (operation, target, endpoint, input digest,
 * deterministic request id), then calls the adapter once. A receipt is recorded; an error that
 * proves nothing was done fails the Effect; anything else makes it unknown.
 */
export async function performEffect(
  deps: FrontierDeps,
  task: TaskHandle,
  candidate: CompiledCandidate & { action: { kind: 'effect' } },
): Promise<void> {
  const { context } = task;
  const { adapter: name, operation, target, input, reconcile } = candidate.action;
  const adapter = adapterOf(deps, task, name);
  const requestId = clientRequestId(task.taskId, context.attempt, context.generation, 'effect');
  const intent = OBJECT_KINDS['effect-intent'].parse({
    taskId: task.taskId,
    generation: context.generation,
    requestId,
    candidateId: candidate.id,
    adapter: name,
    endpoint: adapter.endpoint ?? '',
    operation,
    target,
    input,
    inputDigest: digestOf(input),
  });
  const intended = await task.send(
    {
      type: 'effect.intend',
      generation: context.generation,
      requestId,
      candidateId: candidate.id,
      intentDigest: digestOf({ kind: 'effect-intent', body: intent }),
      reconcile,
    },
    { objects: [{ kind: 'effect-intent', body: intent }] },
  );
  if (!intended.written) return;
  deps.step(task, `performing ${candidate.id}: ${operation} ${target} through ${name} as ${requestId}`);
  let answer: unknown;
  try {
    answer = await adapter.perform(requestId, input, { operation, target });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (adapter.notPerformed?.(error)) {
      const code = isCodedError(error) ? error.code : 'effect_refused';
      deps.step(task, `${requestId} refused by ${name} (${code}): nothing was performed`);
      await task.send({ type: 'effect.fail', requestId, code, reason });
      return;
    }
    deps.step(task, `${requestId}: no answer (${reason}); the Effect is unknown and is never performed again`);
    await task.send({ type: 'effect.lost', requestId, reason });
    return;
  }
  const receipt = Receipt.safeParse(answer);
  if (!receipt.success) {
    // Something answered, but not a receipt: the Effect may have happened all the same.
    await task.send({ type: 'effect.lost', requestId, reason: 'the answer is not a JSON receipt' });
    return;
  }
  const object = receiptObject(task, requestId, 'perform', receipt.data);
  deps.step(task, `${requestId} performed: receipt recorded`);
  await task.send(
    { type: 'effect.record', requestId, receiptDigest: object.digest },
    { objects: [{ kind: 'effect-receipt', body: object.body }] },
  );
}

/** `confirm_effect`: found after a restart with the intent durable and no answer recorded, the Effect is unknown. */
export async function confirmEffect(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const { requestId } = task.context.effect!;
  deps.step(task, `${requestId}: the Host stopped before recording the answer; the Effect is unknown`);
  await task.send({ type: 'effect.lost', requestId, reason: 'no answer was recorded before the Host stopped' });
}

/**
 * `reconcile_effect`, and `act` for a `reconcile` candidate: looks the Effect's request id up and
 * records every receipt found (one: recorded; more: blocked; none: an operator is asked). A lookup
 * that fails changes nothing: the Effect stays unknown and the next boot or commit asks again.
 */
export async function reconcileEffect(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const effect = task.context.effect!;
  const intent = task.store.getObject<{ adapter: string }>(effect.intentDigest, 'effect-intent').body;
  const adapter = adapterOf(deps, task, intent.adapter);
  const found = parsed(Receipts, await adapter.lookup(effect.requestId), `lookup ${effect.requestId}`);
  const objects = found.map((receipt) => receiptObject(task, effect.requestId, 'lookup', receipt));
  deps.step(task, `looked ${effect.requestId} up in ${intent.adapter}: ${found.length} receipt(s)`);
  await task.send(
    { type: 'effect.reconcile', requestId: effect.requestId, receiptDigests: objects.map((o) => o.digest) },
    { objects: objects.map((o) => ({ kind: 'effect-receipt', body: o.body })) },
  );
}

/**
 * The id of the operator's DecisionRequest about the Effect `requestId`: `<requestId>/operator`,
 * then `<requestId>/operator-2`, … — each escalation is a new question (an answer `reconcile` whose
 * lookup again finds nothing escalates again), and a request id is consumed once.
 */
export function operatorRequestId(task: Pick<TaskHandle, 'context'>, requestId: string): string {
  const base = `${requestId}/operator`;
  const asked = Object.keys(task.context.requests).filter((id) => id === base || id.startsWith(`${base}-`)).length;
  return asked === 0 ? base : `${base}-${asked + 1}`;
}

/**
 * `escalate_effect`: a lookup found nothing under the request id. Nothing says whether the
 * operation happened (it may still land, or the system may not keep what it did), so the Host asks
 * an operator instead of guessing; the request is bound to the Task's Context.
 */
export async function escalateEffect(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const effect = task.context.effect!;
  const intent = OBJECT_KINDS['effect-intent'].parse(task.store.getObject(effect.intentDigest, 'effect-intent').body);
  await openDecisionRequest(deps, task, 'effect', {
    requestId: operatorRequestId(task, effect.requestId),
    pendingAction: `${intent.operation} ${intent.target} through ${intent.adapter} (${effect.requestId})`,
    participant: 'operator',
    alternatives: [
      { id: 'reconcile', summary: `look ${effect.requestId} up again` },
      { id: 'abandon', summary: 'classify it as not performed; the Task waits for a new Assignment' },
    ],
    evidence: [`intent ${effect.intentDigest}`, `no receipt under ${effect.requestId} at lookup`],
    unresolvedClaims: [`whether ${intent.operation} ${intent.target} happened`],
    consequence: 'performing it again could do it twice; classifying it wrongly loses it',
    reversibility: 'unknown',
    authority: 'the operator of the system the Effect went to',
    budgetImpact: 'none known',
    revokedWhen: REVOKED_WITH_CONTEXT,
    costOfDelay: 'the Task waits',
    allowed: ['reconcile', 'abandon'],
    ttlMs: null,
  });
}
