import type { EventStore } from '../../store/index.js';
import type { SendResult } from '../send-result.js';
import type { Cluster, ClusterHooks } from './cluster.js';
import { notHere } from './not-here.js';

/**
 * How many times an event is handed to a Task's actor when the Host's own append is refused
 * `revision_conflict`; then the Task is copied again in the keeper's next round and the send
 * answers as for a Task being copied (`storage_failed`, retryable).
 */
export const OWN_CONFLICT_TRIES = 3;

/** What `sendOwnRetried` reads: the served actors (as the Supervisor keeps them) and, on a shared history, its cluster. */
export interface OwnConflictDeps<T> {
  tasks: ReadonlyMap<string, T>;
  cluster: Cluster | undefined;
  store: EventStore;
  hooks: ClusterHooks;
}

/**
 * Hands an event from outside to the Task's actor; a refusal `revision_conflict` is the Host's
 * own, never the sender's (no event a sender sends names a stream revision): on a shared history,
 * a keeper round claimed the Task back at a new epoch and the actor still holds the copy from
 * before another Host wrote to it. The Task is then copied again from the authority, rebuilt, and
 * the event handed to the new actor, up to `OWN_CONFLICT_TRIES` times. Nothing was written by a
 * refused try, so trying again cannot write the event twice (its `eventId`, if any, is checked
 * again each time). On an embedded store no other writer exists behind the state-root lock, and a
 * conflict is answered as it is.
 */
export async function sendOwnRetried<T>(
  deps: OwnConflictDeps<T>,
  taskId: string,
  send: (task: T) => Promise<SendResult>,
): Promise<SendResult> {
  const { tasks, cluster, store, hooks } = deps;
  for (let tries = 1; ; tries++) {
    const task = tasks.get(taskId);
    if (!task) return notHere(cluster, taskId);
    const result = await send(task);
    if (result.kind !== 'refused' || result.code !== 'revision_conflict' || !cluster) return result;
    if (tries >= OWN_CONFLICT_TRIES) {
      hooks.lost(taskId);
      cluster.markForReload(taskId);
      return notHere(cluster, taskId);
    }
    // Another send that conflicted on the same stale actor may have rebuilt it already.
    if (tasks.get(taskId) === task) await cluster.reread(store, taskId, hooks);
  }
}
