import type { Supervisor } from '../../kernel/supervisor.js';

/** Resolves when the Task reaches one of `states` (see `Supervisor.waitFor`). */
export function waitForState(sup: Supervisor, taskId: string, states: string[], failOn?: string[]): Promise<string> {
  return sup.waitFor(taskId, states, failOn);
}

/** Resolves once the Task's journal holds an event of `type` (already, or at a later commit). */
export function journalHas(sup: Supervisor, taskId: string, type: string): Promise<void> {
  return new Promise((resolve) => {
    let off = () => {};
    const check = () => {
      if (sup.events(taskId).some((e) => e.type === type)) {
        off();
        resolve();
      }
    };
    off = sup.subscribe((c) => c.taskId === taskId && check());
    check();
  });
}
