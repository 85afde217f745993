import { setTimeout as delay } from 'node:timers/promises';

/**
 * Polls `probe` every 50 ms until it returns something other than undefined, and resolves with it;
 * rejects naming `what` after `ms`. For conditions on another process or a database, which send no
 * event to wait on; the deadline only bounds a failure, it is no measurement.
 */
export async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await delay(50);
  }
}
