import type { TaskMachineContext } from '../machines/index.js';
import type { HarnessRunReceipt, PermissionGrant, PermissionRecord } from '../drivers/index.js';
import { DecisionRequestObject, type ReadSetContext } from '../objects/index.js';
import type { EventStore } from '../store/index.js';
import { openDecisionRequest, type TaskHandle } from '../kernel/index.js';
import { taskGrants } from '../views/index.js';
import type { FrontierDeps } from './work-options.js';

/**
 * Provider permission requests the run's policy escalated (docs/permissions.md): each becomes one
 * DecisionRequest about `permission`, asked after the run (a run cannot wait for a person), and an
 * `allow` answer becomes a grant the next Assignment's Context shows and its run's policy honours.
 */

/** The DecisionRequest id of a permission request: the Task and the request's content key, nothing of the run. */
export function permissionRequestId(taskId: string, key: string): string {
  return `${taskId}/permission/${key}`;
}

/** What a permission request would do, in words. */
function actionOf(record: PermissionRecord): string {
  const { kind, title, command, paths } = record.evidence;
  const what = command ?? (paths.length ? paths.join(', ') : title || '(nothing named)');
  return `${kind} ${what}`;
}

/**
 * Opens one DecisionRequest per escalated permission request of the receipt. The id comes from
 * the request's content, so a provider that asks the same again (in this run or a later one) names
 * the request already open or answered, never a second one. Not bound to the Context: it stays
 * pending across Assignments until answered. Returns the request ids.
 */
export async function openPermissionRequests(
  deps: FrontierDeps,
  task: TaskHandle,
  receipt: HarnessRunReceipt,
): Promise<string[]> {
  const ids: string[] = [];
  for (const record of receipt.permissions ?? []) {
    if (record.answer !== 'escalate') continue;
    const e = record.evidence;
    const requestId = permissionRequestId(task.taskId, e.key);
    ids.push(requestId);
    await openDecisionRequest(deps, task, 'permission', {
      requestId,
      pendingAction: actionOf(record),
      participant: 'operator',
      alternatives: [
        { id: 'allow', summary: 'allow exactly this request in the next Assignment' },
        { id: 'refuse', summary: 'refuse exactly this request in the next Assignment' },
      ],
      evidence: [
        `asked during run ${receipt.runId} (${receipt.driver}, ${receipt.provider.name})`,
        `policy: escalate (${record.reason})`,
        `paths ${e.insideWorkspace ? 'inside' : 'not all inside'} the workspace: ${e.paths.join(', ') || 'none named'}`,
        `ownership ${e.ownership}; authority ${e.authority}; budget ${e.budget}`,
      ],
      unresolvedClaims: e.consequence === 'unknown' ? [`what ${actionOf(record)} changes`] : [],
      consequence: e.consequence === 'unknown' ? 'unknown until someone looks' : `${e.kind} of ${e.paths.join(', ')}`,
      reversibility: e.reversible,
      authority: `the Task's operator (the Task's own authority is ${e.authority})`,
      budgetImpact: e.budget === 'none' ? 'none visible in the request' : e.budget,
      revokedWhen: ['never by a new Assignment; an allow is used only while its bound world holds'],
      costOfDelay: 'the run went on without it; until it is answered, a later run that asks the same is declined again',
      allowed: ['allow', 'refuse'],
      permission: {
        key: e.key,
        kind: e.kind,
        title: e.title,
        command: e.command,
        paths: e.paths,
        reason: record.reason,
      },
      bindContext: false,
      ttlMs: null,
    });
  }
  return ids;
}

/** The Task's answered permission requests, as the next Context records them. */
export function grantsOf(store: Pick<EventStore, 'getObject'>, context: TaskMachineContext): ReadSetContext['grants'] {
  const grants = taskGrants({ object: (digest) => store.getObject(digest, 'decision-request').body }, context.requests);
  return grants.length ? grants : undefined;
}

/**
 * The run policy's grants of a Context: each of its grants, `moved` when a trusted source the
 * request was bound to (its world revision) no longer has the digest it had then.
 */
export function runGrants(
  store: Pick<EventStore, 'getObject'>,
  context: TaskMachineContext,
  body: ReadSetContext,
): PermissionGrant[] {
  const now = new Map(body.items.map((item) => [item.sourceId, item.digest]));
  return (body.grants ?? []).map((grant) => {
    const held = context.requests[grant.requestId]!;
    const request = DecisionRequestObject.parse(store.getObject(held.digest, 'decision-request').body);
    const moved = request.worldRevision.some((bound) => now.get(bound.sourceId) !== bound.digest);
    const world = moved ? ('moved' as const) : ('current' as const);
    return { key: grant.key, requestId: grant.requestId, by: grant.by, answer: grant.answer, world };
  });
}
