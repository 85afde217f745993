import { HostError } from './errors.js';
import type { Committed } from './task-actor.js';
import type { SubscribeOptions } from './commit-listeners.js';

/** What `waitForState` listens to: a Supervisor. */
export interface StateSource {
  taskActor(taskId: string): { readonly state: string } | undefined;
  subscribe(listener: (committed: Committed) => void, options?: SubscribeOptions): () => void;
  readonly actor: { subscribe(observer: { complete: () => void }): { unsubscribe(): void } };
}

/**
 * `Supervisor.waitFor`: resolves with the Task's state once it is one of `states`; rejects with
 * `invalid_transition` if it reaches one of `failOn` first, or `not_serving` when the supervisor
 * stops. Checks now and after each of the Task's commits; never polls.
 */
export function waitForState(source: StateSource, taskId: string, states: string[], failOn: string[]): Promise<string> {
  return waitForTask(source, taskId, (state) => {
    if (states.includes(state)) return true;
    if (!failOn.includes(state)) return false;
    const waited = states.join(' | ');
    throw new HostError('invalid_transition', `task ${taskId} reached ${state} while waiting for ${waited}`);
  });
}

/**
 * Resolves with the Task's state once `done(state)` holds (rejects with what it throws), or rejects
 * `not_serving` when the supervisor stops. Checks now and after each of the Task's commits on
 * this Host; never polls.
 */
export function waitForTask(source: StateSource, taskId: string, done: (state: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let stop = () => {};
    const check = (): void => {
      const state = source.taskActor(taskId)?.state;
      if (state === undefined) return;
      let finished: boolean;
      try {
        finished = done(state);
      } catch (error) {
        stop();
        reject(error as Error);
        return;
      }
      if (finished) {
        stop();
        resolve(state);
      }
    };
    // The state read is this Host's actor's: another Host's commits cannot move it.
    const unsubscribe = source.subscribe((c) => c.taskId === taskId && check(), { remote: 'none' });
    const lifecycle = source.actor.subscribe({
      complete: () => (stop(), reject(new HostError('not_serving', 'supervisor stopped'))),
    });
    stop = () => {
      unsubscribe();
      lifecycle.unsubscribe();
    };
    check();
  });
}
