import { z } from 'zod';
import { TaskId } from '../../store/records.js';

/** `:id` of `/tasks/:id…`. */
export const TaskIdParam = TaskId;

/** `POST /tasks` with `{ "workload": "hamilton-v1" }`: the frozen demo workload's Task spec. */
export const WorkloadRequest = z.strictObject({
  workload: z.enum(['hamilton-v1']),
  taskId: TaskId.optional(),
});

/** Query of `GET /tasks/:id`. */
export const ShowQuery = z.object({ events: z.enum(['0', '1', 'true', 'false']).optional() });

/** Query of `GET /events` (SSE). */
export const StreamQuery = z.object({ taskId: TaskId.optional() });
