import { z } from 'zod';

/**
 * What the cluster scenario (cluster.bench.ts) and each of its Host processes (cluster-host.ts)
 * say to each other over the IPC channel. Both sides parse what they receive. Times are epoch
 * milliseconds (`Date.now()`): the processes and the PostgreSQL server share one machine's clock,
 * so a window can span Hosts and lease rows can be compared with a kill.
 */

/** How often a watching Host looks for Tasks it newly serves: the resolution of the takeover time. */
export const WATCH_EVERY_MS = 5;

/** How a Host process is started (its one argument, JSON). */
export const HostConfig = z.object({
  /** The Host's own state root (its mirror on PostgreSQL, its whole store on LMDB). */
  state: z.string().min(1),
  /** `postgres://…`; absent: the embedded LMDB store. */
  store: z.string().min(1).optional(),
  hostId: z.string().min(1).optional(),
  leaseMs: z.number().int().positive().optional(),
  renewEveryMs: z.number().int().positive().optional(),
});
export type HostConfig = z.infer<typeof HostConfig>;

export const ToHost = z.discriminatedUnion('type', [
  /** Create these Tasks here (each then held by this Host). */
  z.object({ type: z.literal('create'), taskIds: z.array(z.string().min(1)) }),
  /** Drive every Task this Host created for `cycles` Host cycles, all at once; `firstSeed` as in admission's drive. */
  z.object({ type: z.literal('drive'), cycles: z.number().int().positive(), firstSeed: z.number().int() }),
  /** Report the Tasks served here now and, from then on, each Task as it starts being served. */
  z.object({ type: z.literal('watch') }),
  /** Stop the Supervisor cleanly (leases released) and exit 0. */
  z.object({ type: z.literal('stop') }),
]);
export type ToHost = z.infer<typeof ToHost>;

export const FromHost = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), hostId: z.string().nullable(), pid: z.number().int() }),
  z.object({ type: z.literal('created'), count: z.number().int().nonnegative() }),
  z.object({
    type: z.literal('driven'),
    admitted: z.number().int().nonnegative(),
    startedAt: z.number(),
    endedAt: z.number(),
    /** CPU time this Host process spent (every thread: user + system) from start to end. */
    cpuMs: z.number().nonnegative(),
  }),
  /** The answer to `watch`: the Tasks served here now. */
  z.object({ type: z.literal('watching'), taskIds: z.array(z.string()), at: z.number() }),
  /** After `watch`: Tasks this Host started serving since its last report, seen at `at`. */
  z.object({ type: z.literal('serving'), taskIds: z.array(z.string()), at: z.number() }),
  z.object({ type: z.literal('failed'), message: z.string() }),
]);
export type FromHost = z.infer<typeof FromHost>;
