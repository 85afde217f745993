import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loopLogPath } from '../frontier/index.js';
import type { Supervisor } from '../kernel/index.js';

/**
 * Hands each admitted `task.steer` to the Loop v0 conversation of its Task's current Attempt: one
 * file, `inbox/r<revision>.json`, in the loop's folder, which the loop reads at its next turn
 * boundary (drivers/loop/step-log.ts `unreadSteers`) and records. Written whole, then renamed, so
 * the loop never reads half a message; the revision names it, so a message is one file whatever
 * repeats. Only this Host's own commits: the loop runs where its Task is served.
 */
export function deliverSteers(supervisor: Supervisor, loops: string): () => void {
  return supervisor.subscribe(
    (committed) => {
      if (committed.type !== 'task.steer' || !committed.admitted) return;
      const event = supervisor.events(committed.taskId).find((e) => e.revision === committed.revision);
      const attempt = supervisor.getTask(committed.taskId)?.context.attempt;
      const message = (event?.data as { message?: unknown } | undefined)?.message;
      if (attempt === undefined || typeof message !== 'string') return;
      const inbox = join(loopLogPath(loops, committed.taskId, attempt), 'inbox');
      mkdirSync(inbox, { recursive: true });
      const file = join(inbox, `r${committed.revision}.json`);
      writeFileSync(`${file}.new`, JSON.stringify({ message }));
      renameSync(`${file}.new`, file);
    },
    { remote: 'none' },
  );
}
