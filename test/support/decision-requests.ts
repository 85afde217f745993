import type { OperatorRequestInput } from '../../actors/operator-requests.js';
import type { Supervisor } from '../../actors/supervisor.js';

/** An operator question with two answers (`ship`, `hold`); `ttlMs` null: no deadline. */
export function operatorRequest(requestId: string, ttlMs: number | null = null): OperatorRequestInput {
  return {
    requestId,
    pendingAction: 'ship release 4.2 to the staging fleet',
    participant: 'release-manager',
    alternatives: [
      { id: 'ship', summary: 'ship it now' },
      { id: 'hold', summary: 'hold until the migration lands' },
    ],
    evidence: ['the staging smoke test passed'],
    unresolvedClaims: ['the migration is reversible'],
    consequence: 'staging serves 4.2',
    reversibility: 'reversible',
    authority: 'release management',
    budgetImpact: 'none',
    revokedWhen: ['a new Assignment'],
    costOfDelay: 'staging stays on 4.1',
    allowed: ['ship', 'hold'],
    ttlMs,
  };
}

/** The request events and answers of a Task's journal: type, origin, refusal code and request id. */
export function requestEvents(sup: Supervisor, taskId: string) {
  return sup
    .events(taskId)
    .filter((e) => e.type.startsWith('request.'))
    .map((e) => ({
      type: e.type,
      origin: e.origin,
      code: e.disposition.admitted ? null : e.disposition.code,
      requestId: e.data['requestId'],
    }));
}

export const HOUR = 3_600_000;
