import { realTimer, type Clock } from './clock.js';
import type { FrontierScheduler } from './frontier-scheduler.js';

/** What a drain found of the stages running when it began: how many ended on their own, how many it leaves to be stopped. */
export interface StageDrain {
  /** Stages whose run was in flight when the drain began. */
  running: number;
  /** Of those, the ones whose run ended (and was observed) within the timeout. */
  finished: number;
  /** Of those, the ones still running at the timeout: stopped next, recoverable. */
  stopped: number;
}

/**
 * Holds the frontier (nothing new starts) and waits, up to `timeoutMs` on `clock`, for the work
 * in flight to be over. A stage whose run ends meanwhile is observed and committed as any other;
 * one still running when the time is up is counted `stopped`: the caller stops the Host, whose
 * Runtime records its job stopped (`abandoned`), and the next boot dispatches the stage again as
 * its retry policy allows (docs/stages.md, "Retries").
 */
export async function drainStages(frontier: FrontierScheduler, clock: Clock, timeoutMs: number): Promise<StageDrain> {
  const running = frontier.hold();
  let cancel: () => void = () => undefined;
  const expired = new Promise<void>((resolve) => (cancel = (clock.setTimer ?? realTimer)(timeoutMs, resolve)));
  await Promise.race([frontier.idle(), expired]);
  cancel();
  const still = new Set(frontier.running());
  const stopped = running.filter((taskId) => still.has(taskId)).length;
  return { running: running.length, finished: running.length - stopped, stopped };
}
