import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { Supervisor } from '../../kernel/index.js';
import { StreamRevision, type StreamQuery } from './api-schemas.js';
import { ApiError } from './http-io.js';
import type { SseHub } from './sse-hub.js';
import { committedAfter } from './stream-replay.js';

/**
 * `GET /events[?taskId=]`: opens the SSE stream. Where a per-Task stream resumes comes from the
 * `Last-Event-ID` header (what EventSource sends on reconnecting), else `lastEventId`, else
 * `after`: the header wins, since a reconnecting EventSource repeats the URL it was opened with.
 * The all-Tasks stream takes no `after`; a `Last-Event-ID` there is answered with a `reset` event.
 */
export async function openStream(
  req: IncomingMessage,
  res: ServerResponse,
  q: z.output<typeof StreamQuery>,
  sup: Supervisor,
  hub: SseHub,
): Promise<void> {
  const header = req.headers['last-event-id'];
  const [from, raw] =
    typeof header === 'string' && header !== ''
      ? (['Last-Event-ID', header] as const)
      : q.lastEventId !== undefined
        ? (['lastEventId', q.lastEventId] as const)
        : (['after', q.after] as const);
  if (q.taskId === undefined) {
    if (q.after !== undefined)
      throw new ApiError(400, 'invalid_request', 'after: only with taskId (the all-Tasks stream is not replayed)', {
        path: 'after',
      });
    return hub.open(res, raw === undefined ? {} : { resumeFrom: raw.slice(0, 300) });
  }
  if (raw === undefined) return hub.open(res, { taskId: q.taskId });
  const revision = StreamRevision.safeParse(raw);
  if (!revision.success)
    throw new ApiError(400, 'invalid_request', `${from}: expected a revision of task ${q.taskId} (a whole number)`, {
      path: from,
    });
  const taskId = q.taskId;
  return hub.open(res, {
    taskId,
    after: Number(revision.data),
    replay: (after) => committedAfter(sup, taskId, after),
  });
}
