import type { Finding } from './errors.js';

/**
 * What is wrong with a Task's head against its chained stream, which ends at revision `last` with
 * digest `lastDigest`: no head is a `stream_gap`; one naming another revision or digest is a
 * `stream_gap` when it is ahead of the stream, else `stream_corrupt`. Undefined when it names the
 * stream's end.
 */
export function headFinding(
  taskId: string,
  last: number,
  head: { revision: number; digest: string } | undefined,
  lastDigest: string | null | undefined,
): Finding | undefined {
  if (head === undefined)
    return {
      code: 'stream_gap',
      taskId,
      revision: last,
      object: 'head',
      message: `task ${taskId} has ${last} events but no head`,
    };
  if (head.revision === last && head.digest === lastDigest) return undefined;
  return {
    code: head.revision > last ? 'stream_gap' : 'stream_corrupt',
    taskId,
    revision: head.revision,
    object: 'head',
    message: `task ${taskId}: head names revision ${head.revision} ${head.digest}, stream ends at ${last} ${lastDigest ?? ''}`,
  };
}
