import type { HarnessConfig } from '../../frontier/harness-config.js';
import type { Host } from '../../host/host.js';
import { OBJECT_KINDS, type EffectReceiptObject, type TaskSpecInput } from '../../objects/index.js';
import { choiceSpec, pickHarnesses } from './decision-task.js';

/**
 * A Task whose decision stage performs an external Effect through the adapter registered as
 * `ledger` (the Round 1 ledger in the tests): the trusted policy and tool list of decision-task.ts
 * support every candidate, so admission turns on the Effect's state alone. The stage does not
 * propose completion: once its action is recorded (or refused) the Task waits.
 */

/** What the ledger entry of the maintenance says. */
export const MAINTENANCE = {
  operation: 'apply-v1',
  target: 'records/client.js',
  input: { tool: 'migrate-v1', schemaVersion: 1 },
};

/** The candidates' actions, by candidate id. */
const ACTIONS = {
  maintain: { kind: 'effect', adapter: 'ledger', ...MAINTENANCE, reconcile: 'host' },
  'maintain-later': { kind: 'effect', adapter: 'ledger', ...MAINTENANCE, reconcile: 'decision' },
  // The ledger takes targets of at most 200 characters: its client refuses this one without sending it.
  oversized: { kind: 'effect', adapter: 'ledger', ...MAINTENANCE, target: 'x'.repeat(201), reconcile: 'host' },
  reconcile: { kind: 'reconcile' },
  'classify-failed': { kind: 'abandon' },
} as const;

export type EffectCandidate = keyof typeof ACTIONS;

/** The spec; `taskId` fixes the Task's id (so a test knows the Effect's request id before it exists). */
export function effectSpec(taskId?: string): TaskSpecInput {
  return choiceSpec({
    taskId,
    title: 'Record the maintenance in the ledger',
    goal: 'Record the format maintenance in the shared ledger exactly once.',
    candidates: Object.entries(ACTIONS).map(([id, action]) => ({ id, summary: `${id} (${action.kind})`, action })),
  });
}

/** Harnesses `pick-<candidate>`: a command agent that chooses that candidate in the Context it is shown. */
export const EFFECT_HARNESSES: Record<string, HarnessConfig> = pickHarnesses(Object.keys(ACTIONS));

/** Every Effect receipt the Task's `effect.record` and `effect.reconcile` events name, oldest first. */
export function receiptsOf(h: Host, taskId: string): EffectReceiptObject[] {
  return h.supervisor
    .events(taskId)
    .flatMap((e) =>
      e.type === 'effect.record'
        ? [e.data['receiptDigest'] as string]
        : e.type === 'effect.reconcile'
          ? (e.data['receiptDigests'] as string[])
          : [],
    )
    .map((digest) => OBJECT_KINDS['effect-receipt'].parse(h.supervisor.getObject(digest).body));
}
