import { z } from 'zod';

/**
 * The evidence-rich permission policy (docs/permissions.md): what the Host answers when a provider
 * asks before acting (a Codex approval, an ACP `session/request_permission`). Pure and total: the
 * same evidence always gives the same answer, in a worker thread or in the oracle's table.
 */

/** What a permission request would do. */
export const PermissionKind = z.enum(['read', 'edit', 'execute', 'fetch', 'delete', 'other']);
export type PermissionKind = z.infer<typeof PermissionKind>;

/** Everything the policy weighs about one permission request. */
export const PermissionEvidence = z.strictObject({
  /** Stable key of the request's content: a replayed request has the same key (`permissionKey`). */
  key: z.string().min(1),
  kind: PermissionKind,
  /** The request in words, as the provider titled it. */
  title: z.string(),
  /** The command it would run, when it runs one. */
  command: z.string().nullable(),
  /** Paths it names, as given. */
  paths: z.array(z.string()),
  /** Every path it names (and its working directory) lies inside the Task Attempt's workspace. */
  insideWorkspace: z.boolean(),
  reversible: z.enum(['reversible', 'irreversible', 'unknown']),
  /** Whose the touched things are: the Task's own, shared with others, or someone else's. */
  ownership: z.enum(['private', 'shared', 'foreign']),
  /** Whether the Task's authority covers the action: held, forbidden, or not held. */
  authority: z.enum(['held', 'forbidden', 'not_held']),
  /** A prior approval of exactly this request (by key), and whether it still stands. */
  approval: z.object({ status: z.enum(['current', 'expired', 'revoked']), by: z.string().min(1) }).nullable(),
  /** The world revision the request (or its approval) was bound to, and the one now. */
  world: z.object({ bound: z.string().nullable(), current: z.string().nullable() }),
  /** What it spends: nothing, within the Task's own budget, or an institution's budget. */
  budget: z.enum(['none', 'task', 'institutional']),
  consequence: z.enum(['known', 'unknown']),
});
export type PermissionEvidence = z.infer<typeof PermissionEvidence>;

/** The policy's answer: allow or refuse at once, or escalate to a person (a DecisionRequest). */
export const PermissionAnswer = z.enum(['allow', 'refuse', 'escalate']);
export type PermissionAnswer = z.infer<typeof PermissionAnswer>;

/** Why: the first rule that decided, as a stable code the receipt and the DecisionRequest carry. */
export const PermissionReason = z.enum([
  'authority_forbids',
  'approved',
  'stale_world',
  'unknown_consequence',
  'institutional_budget',
  'not_private',
  'outside_workspace',
  'not_reversible',
  'private_reversible',
]);
export type PermissionReason = z.infer<typeof PermissionReason>;

export interface PermissionVerdict {
  answer: PermissionAnswer;
  reason: PermissionReason;
}

/**
 * Decides one permission request from its evidence, rule by rule, the first that applies:
 *
 * 1. the Task's authority forbids the action → `refuse` (no approval overrides a prohibition);
 * 2. the world moved since the request (or its approval) was bound → `escalate`;
 * 3. a current approval of exactly this request → `allow` (an expired or revoked one is never used);
 * 4. an unknown consequence, an institutional budget, shared or foreign ownership, a path outside
 *    the workspace, or an action that is not reversible → `escalate`;
 * 5. otherwise (private, reversible, inside the workspace, consequence known) → `allow`.
 */
export function decidePermission(evidence: PermissionEvidence): PermissionVerdict {
  const e = evidence;
  if (e.authority === 'forbidden') return { answer: 'refuse', reason: 'authority_forbids' };
  if (e.world.bound !== e.world.current) return { answer: 'escalate', reason: 'stale_world' };
  if (e.approval?.status === 'current') return { answer: 'allow', reason: 'approved' };
  if (e.consequence === 'unknown') return { answer: 'escalate', reason: 'unknown_consequence' };
  if (e.budget === 'institutional') return { answer: 'escalate', reason: 'institutional_budget' };
  if (e.ownership !== 'private') return { answer: 'escalate', reason: 'not_private' };
  if (!e.insideWorkspace) return { answer: 'escalate', reason: 'outside_workspace' };
  if (e.reversible !== 'reversible') return { answer: 'escalate', reason: 'not_reversible' };
  return { answer: 'allow', reason: 'private_reversible' };
}

/**
 * An answered DecisionRequest about one permission request (by key), as the Host hands it to the
 * next run: `allow` is a current approval of exactly that request, `refuse` forbids it (the
 * person with the authority said no). `world` is `moved` when a source the request was bound to
 * changed since.
 */
export const PermissionGrant = z.strictObject({
  key: z.string().min(1),
  requestId: z.string().min(1),
  by: z.string().min(1),
  answer: z.enum(['allow', 'refuse']).default('allow'),
  world: z.enum(['current', 'moved']).default('current'),
});
export type PermissionGrant = z.infer<typeof PermissionGrant>;

/**
 * How a run answers permission requests (`DriverRunInput.policy`): `route` decides each by
 * `decidePermission`; `accept` and `decline` answer every one the same way, for an embedder who
 * chose that explicitly. `forbid` lists kinds the Task's authority forbids; `grants` are the
 * answered DecisionRequests that allow exactly one request each.
 */
export const RunPolicy = z.object({
  approvals: z.enum(['route', 'accept', 'decline']).default('route'),
  forbid: z.array(PermissionKind).default([]),
  grants: z.array(PermissionGrant).default([]),
});
export type RunPolicy = z.infer<typeof RunPolicy>;
