import { z } from 'zod';
import { TaskId } from '../../store/records.js';

/** `:id` of `/tasks/:id…`. */
export const TaskIdParam = TaskId;

/** `POST /tasks` with `{ "workload": NAME }`: the Task spec of a workload shipped under `workloads/NAME/`. */
export const WorkloadRequest = z.strictObject({
  workload: z.string().regex(/^[a-z0-9][a-z0-9.-]*$/, 'a workload folder name'),
  taskId: TaskId.optional(),
});

/** Query of `GET /tasks/:id`. */
export const ShowQuery = z.object({ events: z.enum(['0', '1', 'true', 'false']).optional() });

/** Query of `GET /events` (SSE). */
export const StreamQuery = z.object({ taskId: TaskId.optional() });
