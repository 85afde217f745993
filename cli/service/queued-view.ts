import { z } from 'zod';

/**
 * A Task whose dispatch waits for a run slot (the kernel's `QueuedRun`) as the CLI reads it from a
 * service: the limit it waits on, that limit's value, its harness and its place in line.
 */
export const QueuedView = z.looseObject({
  limit: z.enum(['runs', 'harness']),
  harness: z.string(),
  max: z.number().int(),
  position: z.number().int(),
});
export type QueuedView = z.infer<typeof QueuedView>;
