import { z } from 'zod';
import { isCodedError } from '../base/index.js';
import { OBJECT_KINDS, type CompiledCandidate } from '../objects/index.js';
import { digestOf, sha256Bytes } from '../store/index.js';
import { type TaskHandle, HostError, REVOKED_WITH_CONTEXT, openDecisionRequest } from '../kernel/index.js';
import { clientRequestId, type FrontierDeps } from './work-options.js';
import { ReceiptWithEvidence, type EffectAdapter, type EffectObservation } from './effect-adapter.js';
import { recheckObservation, type Recheck } from './effect-observations.js';

/**
 * External Effects (docs/effects.md): an operation the Host does not own (a ledger
 * write, a deployment, a message), possibly not idempotent, performed through an adapter the
 * embedder registers. The rules are the Runtime dispatch's, for someone else's system:
 * the intent and its request id are durable before the adapter is called; an answer that does not
 * come back makes the Effect `unknown`; an unknown Effect is reconciled by looking its request id
 * up — never by performing it again.
 */

export type { EffectAdapter, EffectEvidenceFile, EffectObservation, EffectTarget } from './effect-adapter.js';

/** Receipts are kept as objects, so they must be JSON. */
const Receipt = z.json();
/** Evidence files handed over with a receipt (`withEvidence`): named once each, kept as blobs. */
const EvidenceFiles = z
  .array(
    z.object({
      name: z.string().min(1).max(200),
      mediaType: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, 'a media type such as text/html'),
      bytes: z.instanceof(Uint8Array),
    }),
  )
  .refine((files) => new Set(files.map((f) => f.name)).size === files.length, 'file names repeat');
/** An adapter's answer for one receipt: the receipt alone, or `withEvidence(receipt, files)`. */
const Answered = z
  .unknown()
  .transform((value) =>
    value instanceof ReceiptWithEvidence
      ? { receipt: value.receipt, files: value.files }
      : { receipt: value, files: [] },
  )
  .pipe(z.object({ receipt: Receipt, files: EvidenceFiles }));
type Answered = z.output<typeof Answered>;
const Receipts = z.array(Answered);

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
  if (!result.success) {
    const issue = result.error.issues[0];
    const at = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    throw new HostError('effect_answer_invalid', `${what}${at}: ${issue?.message}`);
  }
  return result.data;
}

const receiptObject = (task: TaskHandle, requestId: string, via: 'perform' | 'lookup', answered: Answered) => {
  const evidence = answered.files.map((f) => ({
    name: f.name,
    mediaType: f.mediaType,
    digest: sha256Bytes(f.bytes),
    bytes: f.bytes.length,
  }));
  // No `evidence` key without files: a receipt without them is the object (and digest) it was before.
  const body = OBJECT_KINDS['effect-receipt'].parse({
    taskId: task.taskId,
    requestId,
    via,
    receipt: answered.receipt,
    ...(evidence.length ? { evidence } : {}),
  });
  return { body, digest: digestOf({ kind: 'effect-receipt', body }) };
};

/** The receipts' objects and their evidence files' bytes (once each), written with the event that names them. */
function receiptAttachments(task: TaskHandle, requestId: string, via: 'perform' | 'lookup', answers: Answered[]) {
  const objects = answers.map((answered) => receiptObject(task, requestId, via, answered));
  const blobs = new Map<string, Uint8Array>();
  for (const { files } of answers) for (const f of files) blobs.set(sha256Bytes(f.bytes), f.bytes);
  return {
    digests: objects.map((o) => o.digest),
    attachments: {
      objects: objects.map((o) => ({ kind: 'effect-receipt', body: o.body })),
      ...(blobs.size ? { blobs: [...blobs.values()] } : {}),
    },
  };
}

/**
 * The receipts whose input digest (the adapter's `receiptInputDigest`) is not the intent's: each
 * was performed for other input, so none may stand for this Effect. A receipt that does not say
 * is not one of them (nothing contradicts it); an adapter without `receiptInputDigest` checks none.
 */
function foreignReceipts(adapter: EffectAdapter, inputDigest: string, answers: readonly Answered[]): Answered[] {
  if (!adapter.receiptInputDigest) return [];
  return answers.filter(({ receipt }) => {
    const digest = adapter.receiptInputDigest!(receipt);
    return digest !== undefined && digest !== inputDigest;
  });
}

/** `effect.conflict`: receipts for other input than the intent's; kept as objects, never recorded as the Effect. */
async function sendConflict(
  deps: FrontierDeps,
  task: TaskHandle,
  requestId: string,
  via: 'perform' | 'lookup',
  receipts: Answered[],
  inputDigest: string,
): Promise<void> {
  const { digests, attachments } = receiptAttachments(task, requestId, via, receipts);
  const reason = `${receipts.length} receipt(s) under ${requestId} (via ${via}) for other input than the intent's ${inputDigest}`;
  deps.step(task, `${reason}: the Task is blocked`);
  await task.send({ type: 'effect.conflict', requestId, receiptDigests: digests, reason }, attachments);
}

type EffectCandidate = CompiledCandidate & { action: { kind: 'effect' } };

/**
 * `act` for an `effect` candidate: observes the endpoint and target again (an adapter with
 * `observe`) and refuses, before any intent, when they moved from what the Context bound; then
 * commits the intent (operation, target, endpoint, input digest, deterministic request id) and
 * calls the adapter once. A receipt is recorded, unless it says it was for other input
 * (`identity_conflict`); an error that proves nothing was done fails the Effect; anything else
 * makes it unknown.
 */
export async function performEffect(deps: FrontierDeps, task: TaskHandle, candidate: EffectCandidate): Promise<void> {
  const { context } = task;
  const { adapter: name, operation, target, input } = candidate.action;
  const adapter = adapterOf(deps, task, name);
  const requestId = clientRequestId(task.taskId, context.attempt, context.generation, 'effect');
  const recheck = await recheckBeforeIntent(deps, task, adapter, candidate);
  if (!recheck) return;
  const inputDigest = digestOf(input);
  const intended = await sendIntent(task, candidate, adapter, requestId, inputDigest, recheck.observation);
  if (!intended) return;
  deps.step(task, `performing ${candidate.id}: ${operation} ${target} through ${name} as ${requestId}`);
  const answered = await performOnce(deps, task, adapter, candidate, requestId, recheck.observation);
  if (!answered) return;
  if (foreignReceipts(adapter, inputDigest, [answered]).length)
    return sendConflict(deps, task, requestId, 'perform', [answered], inputDigest);
  const { digests, attachments } = receiptAttachments(task, requestId, 'perform', [answered]);
  deps.step(
    task,
    `${requestId} performed: receipt recorded` +
      (answered.files.length ? ` with ${answered.files.map((f) => f.name).join(', ')}` : ''),
  );
  await task.send({ type: 'effect.record', requestId, receiptDigest: digests[0]! }, attachments);
}

/**
 * Observes the endpoint and target again; when they moved from what the Context bound, sends
 * `effect.refuse` and returns undefined.
 */
async function recheckBeforeIntent(
  deps: FrontierDeps,
  task: TaskHandle,
  adapter: EffectAdapter,
  candidate: EffectCandidate,
): Promise<Extract<Recheck, { ok: true }> | undefined> {
  const name = candidate.action.adapter;
  // Before the intent: nothing durable names the request id yet, so a crash here repeats the check.
  const recheck = await recheckObservation(task, adapter, name, candidate).catch((error: unknown) => {
    deps.step(
      task,
      `observing ${name} before ${candidate.id} failed (${error instanceof Error ? error.message : error}); nothing is intended`,
    );
    throw error;
  });
  if (recheck.ok) return recheck;
  deps.step(
    task,
    `${candidate.id} refused ${recheck.code} before its intent (${recheck.reason}); nothing is performed`,
  );
  await task.send({
    type: 'effect.refuse',
    generation: task.context.generation,
    candidateId: candidate.id,
    code: recheck.code,
    reason: recheck.reason,
    ...(recheck.code === 'context_stale' ? { stale: recheck.stale } : {}),
  });
  return undefined;
}

/** Commits `effect.intend` with the intent object; false when the event was not written. */
async function sendIntent(
  task: TaskHandle,
  candidate: EffectCandidate,
  adapter: EffectAdapter,
  requestId: string,
  inputDigest: string,
  observation: EffectObservation | undefined,
): Promise<boolean> {
  const { context } = task;
  const { adapter: name, operation, target, input, reconcile } = candidate.action;
  const observed = observation
    ? { endpointIdentity: observation.endpointIdentity, targetVersion: observation.targetVersion }
    : {};
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
    inputDigest,
    ...observed,
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
  return intended.written;
}

/**
 * Calls the adapter once and parses its answer; when there is none to record, sends
 * `effect.fail` (nothing was performed) or `effect.lost` (unknown) and returns undefined.
 */
async function performOnce(
  deps: FrontierDeps,
  task: TaskHandle,
  adapter: EffectAdapter,
  candidate: EffectCandidate,
  requestId: string,
  observation: EffectObservation | undefined,
): Promise<Answered | undefined> {
  const { adapter: name, operation, target, input } = candidate.action;
  // The version the intent records (observed just before it), for an adapter that makes `perform` conditional on it.
  const at = observation ? { operation, target, targetVersion: observation.targetVersion } : { operation, target };
  let answer: unknown;
  try {
    answer = await adapter.perform(requestId, input, at);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (adapter.notPerformed?.(error)) {
      const code = isCodedError(error) ? error.code : 'effect_refused';
      deps.step(task, `${requestId} refused by ${name} (${code}): nothing was performed`);
      await task.send({ type: 'effect.fail', requestId, code, reason });
      return undefined;
    }
    deps.step(task, `${requestId}: no answer (${reason}); the Effect is unknown and is never performed again`);
    await task.send({ type: 'effect.lost', requestId, reason });
    return undefined;
  }
  const answered = Answered.safeParse(answer);
  if (!answered.success) {
    // Something answered, but not a receipt (or its evidence files do not parse): the Effect may
    // have happened all the same.
    const issue = answered.error.issues[0];
    const reason = `the answer is not a JSON receipt with valid evidence files (${issue?.path.join('.') || 'answer'}: ${issue?.message})`;
    deps.step(task, `${requestId}: ${reason}; the Effect is unknown`);
    await task.send({ type: 'effect.lost', requestId, reason });
    return undefined;
  }
  return answered.data;
}

/** `confirm_effect`: found after a restart with the intent durable and no answer recorded, the Effect is unknown. */
export async function confirmEffect(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const { requestId } = task.context.effect!;
  deps.step(task, `${requestId}: the Host stopped before recording the answer; the Effect is unknown`);
  await task.send({ type: 'effect.lost', requestId, reason: 'no answer was recorded before the Host stopped' });
}

/**
 * `reconcile_effect`, and `act` for a `reconcile` candidate: looks the Effect's request id up and
 * records every receipt found (one: recorded; more: blocked; none: an operator is asked; any for
 * other input than the intent's: blocked). An adapter without `lookup`, or whose lookup answers
 * null, cannot say what happened: the Host records that (`unanswerable`) and an operator is asked,
 * never a retry. A lookup that fails changes nothing: the Effect stays unknown and it is asked
 * again after the frontier's retry backoff (a lookup changes nothing, so asking again is safe).
 */
export async function reconcileEffect(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const effect = task.context.effect!;
  const intent = OBJECT_KINDS['effect-intent'].parse(task.store.getObject(effect.intentDigest, 'effect-intent').body);
  const adapter = adapterOf(deps, task, intent.adapter);
  const at = { operation: intent.operation, target: intent.target };
  const answer = adapter.lookup ? await adapter.lookup(effect.requestId, at) : null;
  if (answer === null) {
    const unanswerable = adapter.lookup ? 'declined' : 'no-lookup';
    deps.step(task, `${intent.adapter} cannot be asked what happened under ${effect.requestId} (${unanswerable})`);
    await task.send({ type: 'effect.reconcile', requestId: effect.requestId, receiptDigests: [], unanswerable });
    return;
  }
  const found = parsed(Receipts, answer, `lookup ${effect.requestId}`);
  const foreign = foreignReceipts(adapter, intent.inputDigest, found);
  if (foreign.length) return sendConflict(deps, task, effect.requestId, 'lookup', found, intent.inputDigest);
  const { digests, attachments } = receiptAttachments(task, effect.requestId, 'lookup', found);
  deps.step(task, `looked ${effect.requestId} up in ${intent.adapter}: ${found.length} receipt(s)`);
  await task.send({ type: 'effect.reconcile', requestId: effect.requestId, receiptDigests: digests }, attachments);
}

/** Why the latest lookup of `requestId` found nothing: the provider could not be asked, or it was asked. */
function unanswerableOf(task: TaskHandle, requestId: string): 'no-lookup' | 'declined' | undefined {
  let latest: 'no-lookup' | 'declined' | undefined;
  for (const { event } of task.store.stream(task.taskId)) {
    if (event.type !== 'effect.reconcile') continue;
    const data = event.data as { requestId?: string; unanswerable?: 'no-lookup' | 'declined' };
    if (data.requestId === requestId) latest = data.unanswerable;
  }
  return latest;
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
  const unanswerable = unanswerableOf(task, effect.requestId);
  await openDecisionRequest(deps, task, 'effect', {
    requestId: operatorRequestId(task, effect.requestId),
    pendingAction: `${intent.operation} ${intent.target} through ${intent.adapter} (${effect.requestId})`,
    participant: 'operator',
    alternatives: [
      { id: 'reconcile', summary: `look ${effect.requestId} up again` },
      { id: 'abandon', summary: 'classify it as not performed; the Task waits for a new Assignment' },
    ],
    evidence: [
      `intent ${effect.intentDigest}`,
      unanswerable === undefined
        ? `no receipt under ${effect.requestId} at lookup`
        : `${intent.adapter} cannot be asked what happened under ${effect.requestId}: ${
            unanswerable === 'no-lookup'
              ? 'it has no lookup'
              : 'its lookup cannot answer under it (no lookup for this operation, the window passed, or no id came back)'
          }`,
    ],
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
