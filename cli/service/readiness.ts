import type { Supervisor } from '../../kernel/index.js';

/** Why a Host should be sent no requests now (`GET /ready` answers 503 with it). */
export type NotReadyReason = 'booting' | 'draining' | 'stopped' | 'database_unreachable';

/** What `GET /ready` answers: 200 `{status: 'ready'}`, else 503 with the reason (and since when, for the database). */
export type Readiness = { status: 'ready' } | { status: 'not_ready'; reason: NotReadyReason; since?: string };

const BOOTING = new Set(['booting', 'validating', 'reconciling']);

/**
 * Whether the service should get requests: its supervisor serves, the service is not draining,
 * and, on a shared PostgreSQL history, the last lease renewal reached the database (a Host cut
 * off from it loses its leases, and every send to it answers 503 `storage_failed`). Fixed reason
 * codes only: a probe carries no token, so nothing more is said to it (`GET /status` says more).
 */
export function readiness(sup: Supervisor, draining: boolean): Readiness {
  const status = sup.status;
  if (draining || status === 'draining') return { status: 'not_ready', reason: 'draining' };
  if (BOOTING.has(status)) return { status: 'not_ready', reason: 'booting' };
  if (status !== 'serving') return { status: 'not_ready', reason: 'stopped' };
  const cutOff = sup.databaseUnreachable();
  if (cutOff) return { status: 'not_ready', reason: 'database_unreachable', since: cutOff.since };
  return { status: 'ready' };
}
