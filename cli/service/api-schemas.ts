import { z } from 'zod';
import { strictObject } from '../../base/index.js';
import type { SendKind } from '../../kernel/index.js';
import { TaskId } from '../../store/records.js';

/** `:id` of `/tasks/:id…`. */
export const TaskIdParam = TaskId;

/** `POST /tasks` with `{ "workload": NAME }`: the Task spec of a workload shipped under `workloads/NAME/`; other keys are refused. */
export const WorkloadRequest = strictObject({
  workload: z.string().regex(/^[a-z0-9][a-z0-9.-]*$/, 'a workload folder name'),
  taskId: TaskId.optional(),
});

/** Query of `GET /tasks/:id`. */
export const ShowQuery = z.object({ events: z.enum(['0', '1', 'true', 'false']).optional() });

/** A per-Task stream's position: a revision (the id of its events). */
export const StreamRevision = z.string().regex(/^(0|[1-9][0-9]{0,14})$/, 'expected a revision (a whole number)');

/**
 * Query of `GET /events` (SSE): `taskId` for one Task's stream; `after` (a revision) or
 * `lastEventId` (as the header, for clients that cannot set it) for where it resumes.
 */
export const StreamQuery = z.object({
  taskId: TaskId.optional(),
  after: StreamRevision.optional(),
  lastEventId: z.string().min(1).max(300).optional(),
});

/** A `SendResult`'s `kind`, as a service's answer carries it. */
export const SendKindAnswer = z.enum([
  'admitted',
  'retained',
  'duplicate',
  'refused',
] as const satisfies readonly SendKind[]);
