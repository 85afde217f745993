import type { Cluster } from './cluster.js';
import { refusedNowhere, taskElsewhere, taskNotFound, type SendResult } from '../send-result.js';

/**
 * `send`'s refusal for a Task this Host does not serve (nothing written): `task_not_found`, or on
 * a cluster `task_elsewhere` naming the Host that holds it, or `storage_failed` (retryable) when
 * the database cannot say or the Task is being copied here again.
 */
export async function notHere(cluster: Cluster | undefined, taskId: string): Promise<SendResult> {
  if (!cluster) return taskNotFound(taskId);
  let found: { owner: string | null; url: string | null } | undefined;
  try {
    found = await cluster.history.ownerAndUrl(taskId);
  } catch (error) {
    // The database cannot say whether the Task exists: a Task whose creation was acknowledged
    // must not be answered task_not_found (a client would drop its event), so this is retryable.
    const detail = `task ${taskId} is not served here and the database cannot be read to find it (${(error as Error).message}); retry`;
    return refusedNowhere({ code: 'storage_failed', detail });
  }
  if (found === undefined) return taskNotFound(taskId);
  const { owner, url } = found;
  if (owner === cluster.hostId) {
    const detail = `task ${taskId} is being copied again from the database (an append's outcome was unknown); retry`;
    return refusedNowhere({ code: 'storage_failed', detail });
  }
  return taskElsewhere(taskId, owner, url);
}
