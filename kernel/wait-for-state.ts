import { HostError } from './errors.js';
import type { Committed } from './task-actor.js';
import type { SubscribeOptions } from './commit-listeners.js';

/** What `waitForState` listens to: a Supervisor. */
export interface StateSource {
  taskActor(taskId: string): { readonly state: string } | undefined;
  subscribe(listener: (committed: Committed) => void, options?: SubscribeOptions): () => void;
  readonly actor: { subscribe(observer: { complete: () => void }): { unsubscribe(): void } };
  /**
   * With a cluster: the Task's state and revision as the shared history holds them, for a Task this
   * Host does not serve (undefined when there is no such Task).
   */
  stateElsewhere?(taskId: string): Promise<{ state: string; revision: number } | undefined>;
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
 * `not_serving` when the supervisor stops. Checks now and after each of the Task's commits; never
 * polls. The state is this Host's actor's while it serves the Task; on a cluster, for a Task
 * another Host serves, the latest the shared history holds (read once, then each of its commits).
 */
export function waitForTask(source: StateSource, taskId: string, done: (state: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let stop = () => {};
    let ended = false;
    // Another Host's latest commit of the Task, by revision: the watch and the first read may cross.
    let elsewhere: { state: string; revision: number } | undefined;
    const check = (): void => {
      if (ended) return;
      const state = source.taskActor(taskId)?.state ?? elsewhere?.state;
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
    const hear = (seen: { state: string; revision: number } | undefined): void => {
      if (seen !== undefined && (elsewhere === undefined || seen.revision > elsewhere.revision)) elsewhere = seen;
    };
    const unsubscribe = source.subscribe(
      (c) => {
        if (c.taskId !== taskId) return;
        if (c.host !== undefined && source.taskActor(taskId) === undefined) hear(c);
        check();
      },
      { remote: source.stateElsewhere ? (id) => id === taskId : 'none' },
    );
    const lifecycle = source.actor.subscribe({
      complete: () => (stop(), reject(new HostError('not_serving', 'supervisor stopped'))),
    });
    stop = () => {
      ended = true;
      unsubscribe();
      lifecycle.unsubscribe();
    };
    check();
    if (!ended && source.taskActor(taskId) === undefined && source.stateElsewhere)
      source.stateElsewhere(taskId).then(
        (seen) => (hear(seen), check()),
        (error: unknown) => (stop(), reject(error as Error)),
      );
  });
}
