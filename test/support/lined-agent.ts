import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, watch } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A `command` harness whose runs each wait for the test to let their own Task go: a run notes its
 * Task's id (its workspace is `<state>/workspaces/<taskId>/attempt-<n>`) in `<dir>/marks/runs`,
 * then blocks reading the FIFO `<dir>/gates/<taskId>` until `release(taskId)`, then writes
 * `out.json`. So a test sees which runs started, in which order, and ends them one at a time;
 * no sleep decides anything. Runs confined: the gates are readable, the marks writable.
 */
export function linedAgent(dir: string) {
  mkdirSync(join(dir, 'marks'));
  const gates = join(dir, 'gates');
  mkdirSync(gates);
  const runs = join(dir, 'marks', 'runs');
  const started = (): string[] => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter(Boolean) : []);
  return {
    harness: {
      driver: 'command' as const,
      command: '/bin/sh',
      args: [
        '-c',
        `t=$(basename "$(dirname "$PWD")"); echo "$t" >> "${runs}"; read line < "${gates}/$t"; printf '{"ok":true}' > out.json`,
      ],
      readable: [gates],
      writable: [join(dir, 'marks')],
      timeoutMs: 600_000,
    },
    /** A one-stage spec the agent finishes once released (out.json, checked by the acceptance command). */
    spec: (taskId: string) => {
      execFileSync('mkfifo', [join(gates, taskId)]);
      return {
        taskId,
        title: `Wait for a run slot (${taskId})`,
        goal: 'Write out.json once released.',
        requiredArtifacts: [{ name: 'out.json' }],
        acceptance: { command: '/bin/sh', args: ['-c', 'test -f out.json'] },
      };
    },
    /** The Tasks whose runs started, in the order they started (a Task run twice is named twice). */
    started,
    /** Resolves with the started runs once `n` have started, watching the marks' folder. */
    startedCount: (n: number): Promise<string[]> =>
      new Promise((resolve) => {
        const watcher = watch(join(dir, 'marks'), () => check());
        const check = () => {
          const now = started();
          if (now.length >= n) {
            watcher.close();
            resolve(now);
          }
        };
        check();
      }),
    /** Lets the Task's run waiting at its gate go on. */
    release: (taskId: string) => writeFile(join(gates, taskId), 'go\n'),
  };
}
