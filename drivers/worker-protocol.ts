import { MessagePort } from 'node:worker_threads';
import { z } from 'zod';

/**
 * Messages on the per-run MessagePort between the pool (parent) and the worker running the driver.
 * Both sides parse what they receive: a worker is a boundary like a socket.
 */

/** Parent → worker: stop the run politely (the driver's own cancel, then its process group). */
export const ParentMessage = z.object({ type: z.literal('abort'), reason: z.string() });
export type ParentMessage = z.infer<typeof ParentMessage>;

const pid = z.number().int().positive();

/** Worker → parent: lifecycle facts the parent needs if the worker thread dies. */
export const WorkerMessage = z.discriminatedUnion('type', [
  /** The run reached a thread (`threadId` identifies the worker). */
  z.object({ type: z.literal('started'), threadId: z.number().int().nonnegative() }),
  /**
   * A child process was spawned by this run; the parent kills its group if the worker dies, and
   * reports it (with its start time, read at spawn) so the Runtime can record the provider's group.
   */
  z.object({ type: z.literal('child'), pid, startTicks: z.number().int().nonnegative() }),
  /** That child exited (its pid may be reused from now on; its group may live on). */
  z.object({ type: z.literal('child_exit'), pid }),
  /** The worker killed groups the driver left running after it returned. */
  z.object({ type: z.literal('leftovers_killed'), pids: z.array(pid) }),
]);
export type WorkerMessage = z.infer<typeof WorkerMessage>;

/** What the pool hands piscina for one run; `port` is transferred, `input` is parsed in the worker. */
export const TaskEnvelope = z.object({
  input: z.unknown(),
  port: z.instanceof(MessagePort),
});
export type TaskEnvelope = z.infer<typeof TaskEnvelope>;
