import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { z } from 'zod';
import { DriverKind } from './receipt.js';

/**
 * A provider process a driver run started, as the pool reports it: the leader of its own process
 * group (spawnGroup), identified by pid and start time so a later kill can tell it from a process
 * that reused the pid. Plain data, parsed wherever it is received.
 */
export const ProviderSpawn = z.object({
  runId: z.string().min(1),
  /** The Runtime job the run belongs to, when the Runtime dispatched it (`DriverRunInput.jobId`). */
  jobId: z.string().min(1).optional(),
  driver: DriverKind,
  pid: z.number().int().positive(),
  /** Start time in clock ticks since boot (os/ `processStartTicks`); 0 when it could not be read. */
  startTicks: z.number().int().nonnegative(),
});
export type ProviderSpawn = z.infer<typeof ProviderSpawn>;

/**
 * The diagnostics channel on which every driver pool of this process publishes each `ProviderSpawn`.
 * The Runtime listens on it to record a harness job's provider group durably, without the code
 * that wires a pool to a Runtime having to pass anything along.
 */
export const PROVIDER_SPAWN_CHANNEL = 'ordivon:driver-pool:provider-spawn';

const spawns = channel(PROVIDER_SPAWN_CHANNEL);

/** Publishes one spawn report; synchronous, and a subscriber's throw does not reach the caller. */
export function publishProviderSpawn(spawn: ProviderSpawn): void {
  if (spawns.hasSubscribers) spawns.publish(spawn);
}

/**
 * Calls `listener` with every spawn report published in this process, parsed (a message that does
 * not parse is dropped). Returns the unsubscribe function.
 */
export function subscribeProviderSpawns(listener: (spawn: ProviderSpawn) => void): () => void {
  const handler = (message: unknown): void => {
    const parsed = ProviderSpawn.safeParse(message);
    if (parsed.success) listener(parsed.data);
  };
  subscribe(PROVIDER_SPAWN_CHANNEL, handler);
  return () => void unsubscribe(PROVIDER_SPAWN_CHANNEL, handler);
}
