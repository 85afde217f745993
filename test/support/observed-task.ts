import type { HarnessConfig } from '../../frontier/harness-config.js';
import type { TaskSpecInput } from '../../objects/index.js';
import { choiceSpec, pickHarnesses } from './decision-task.js';

/**
 * A Task whose decision stage performs an Effect through the loopback provider of
 * observed-provider.ts, registered as `provider` (the `keyed` operation, with a lookup) and
 * `provider-plain` (the `plain` operation, no lookup). The trusted policy and tool list of
 * decision-task.ts support every candidate; the stage does not propose completion.
 */

export const OBSERVED_TARGET = 'accounts/42';
export const OBSERVED_INPUT = { amount: 5, currency: 'EUR' };

const ACTIONS = {
  charge: { kind: 'effect', adapter: 'provider', operation: 'keyed', reconcile: 'host' },
  'charge-plain': { kind: 'effect', adapter: 'provider-plain', operation: 'plain', reconcile: 'host' },
} as const;

export type ObservedCandidate = keyof typeof ACTIONS;

export function observedSpec(taskId?: string): TaskSpecInput {
  return choiceSpec({
    taskId,
    title: 'Charge the account once',
    goal: 'Charge the account exactly once.',
    candidates: Object.entries(ACTIONS).map(([id, action]) => ({
      id,
      summary: `${id} (${action.operation})`,
      action: { ...action, target: OBSERVED_TARGET, input: OBSERVED_INPUT },
    })),
  });
}

/** Harnesses `pick-<candidate>`: a command agent that chooses that candidate in the Context it is shown. */
export const OBSERVED_HARNESSES: Record<string, HarnessConfig> = pickHarnesses(Object.keys(ACTIONS));
