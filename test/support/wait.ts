import type { Supervisor } from '../../kernel/supervisor.js';

/** Resolves when the Task reaches one of `states` (see `Supervisor.waitFor`). */
export function waitForState(sup: Supervisor, taskId: string, states: string[], failOn?: string[]): Promise<string> {
  return sup.waitFor(taskId, states, failOn);
}
