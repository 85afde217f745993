import { z } from 'zod';
import type { StaleSource } from '../machines/index.js';
import type { CompiledCandidate, ReadSetItem, Stage } from '../objects/index.js';
import {
  HostError,
  contextOf,
  observationItemId,
  observationValues,
  observedDigest,
  type CandidateObservation,
  type ObservationReader,
  type ObservationValues,
  type TaskHandle,
} from '../kernel/index.js';
import type { EffectAdapter, EffectObservation, EffectTarget } from './effect-adapter.js';

/*
 * Observations of an Effect's endpoint and target (docs/effects.md, "Observations"): bound in the
 * Context of the decision stage offering the candidate, observed again when the decision is
 * admitted, and once more immediately before the intent.
 */

/** An adapter's `observe` answer, parsed: it is the provider's word, read from outside. */
const ObservationAnswer: z.ZodType<EffectObservation> = z.object({
  endpointIdentity: z.string().min(1),
  targetVersion: z.string().min(1).nullable(),
  capabilities: z.object({
    idempotency: z.enum(['key', 'provider-id', 'none']),
    lookup: z.boolean(),
    lookupWindowMs: z.number().int().nonnegative().nullable(),
  }),
});

/** The adapter's observation now, parsed, or `effect_answer_invalid` naming the field that does not parse. */
export async function observeNow(adapter: EffectAdapter, name: string, at: EffectTarget): Promise<EffectObservation> {
  const answer = ObservationAnswer.safeParse(await adapter.observe!(at));
  if (!answer.success) {
    const issue = answer.error.issues[0];
    throw new HostError(
      'effect_answer_invalid',
      `observe ${name} ${at.operation} ${at.target}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
    );
  }
  return answer.data;
}

/**
 * Each `effect` candidate of the stage whose adapter observes, observed now (once per adapter,
 * operation and target), for the Context compiler. An observation that fails fails the compile:
 * the Task stays where it is and the frontier tries again after its backoff.
 */
export async function candidateObservations(
  adapters: Readonly<Record<string, EffectAdapter>> | undefined,
  stage: Stage,
): Promise<Map<string, CandidateObservation>> {
  const observations = new Map<string, CandidateObservation>();
  const seen = new Map<string, ObservationValues>();
  for (const candidate of stage.decision?.candidates ?? []) {
    const { action } = candidate;
    if (action.kind !== 'effect') continue;
    const adapter = adapters?.[action.adapter];
    if (!adapter?.observe) continue;
    const key = JSON.stringify([action.adapter, action.operation, action.target]);
    let values = seen.get(key);
    if (!values) {
      values = observationValues(await observeNow(adapter, action.adapter, action));
      seen.set(key, values);
    }
    observations.set(candidate.id, {
      adapter: action.adapter,
      operation: action.operation,
      target: action.target,
      values,
    });
  }
  return observations;
}

/** The kernel's reader at decision admission: null when no such adapter observes here, or `observe` fails. */
export function observationReader(adapters: Readonly<Record<string, EffectAdapter>> | undefined): ObservationReader {
  return async ({ adapter: name, operation, target }) => {
    const adapter = adapters?.[name];
    if (!adapter?.observe) return null;
    try {
      return observationValues(await observeNow(adapter, name, { operation, target }));
    } catch {
      return null;
    }
  };
}

/** What the re-check before the intent found: nothing moved, or the refusal to send. */
export type Recheck =
  | { ok: true; observation: EffectObservation | undefined }
  | { ok: false; code: 'effect_endpoint_changed'; reason: string }
  | { ok: false; code: 'context_stale'; reason: string; stale: StaleSource[] };

/**
 * Observes the candidate's endpoint and target again and compares them with what its Context
 * bound: a changed identity or capability declaration first (another endpoint would answer; a
 * rerun would bind it without anyone deciding to), then a moved target. A Context without an
 * observation of this candidate (its adapter did not observe when it was compiled) binds nothing
 * to compare; the adapter is still observed, so the intent records what it states.
 */
export async function recheckObservation(
  task: TaskHandle,
  adapter: EffectAdapter,
  name: string,
  candidate: CompiledCandidate & { action: { kind: 'effect' } },
): Promise<Recheck> {
  if (!adapter.observe) return { ok: true, observation: undefined };
  const { operation, target } = candidate.action;
  const now = await observeNow(adapter, name, { operation, target });
  const values = observationValues(now);
  const readSet = task.context.contextDigest
    ? contextOf(task.store, task.taskId, task.context.contextDigest)?.readSet
    : undefined;
  const bound = (aspect: 'endpoint' | 'target' | 'capabilities'): ReadSetItem | undefined =>
    readSet?.items.find((item) => item.sourceId === observationItemId(candidate.id, aspect));
  const changed: string[] = [];
  for (const aspect of ['endpoint', 'capabilities'] as const) {
    const item = bound(aspect);
    if (item && item.digest !== observedDigest(values[aspect]))
      changed.push(`${aspect} bound ${item.observed?.value ?? item.digest}, now ${values[aspect]}`);
  }
  if (changed.length) return { ok: false, code: 'effect_endpoint_changed', reason: changed.join('; ') };
  const targetItem = bound('target');
  const current = observedDigest(values.target);
  if (targetItem && targetItem.digest !== current) {
    return {
      ok: false,
      code: 'context_stale',
      reason: `target ${target} bound ${targetItem.observed?.value ?? 'absent'}, now ${values.target ?? 'absent'}`,
      stale: [{ sourceId: targetItem.sourceId, bound: targetItem.digest, current }],
    };
  }
  return { ok: true, observation: now };
}
