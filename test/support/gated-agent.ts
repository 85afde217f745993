import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, watch } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A `command` harness whose runs end when the test says so, not after a sleep: each run notes
 * that it started in `<dir>/marks/runs`, then blocks reading the FIFO `<dir>/gate/go` until the
 * test writes a line to it (`open`), then writes `out.json`. Runs confined: the gate is readable,
 * the marks writable.
 */
export function gatedAgent(dir: string) {
  mkdirSync(join(dir, 'marks'));
  mkdirSync(join(dir, 'gate'));
  const gate = join(dir, 'gate', 'go');
  execFileSync('mkfifo', [gate]);
  const runs = join(dir, 'marks', 'runs');
  const count = () => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter(Boolean).length : 0);
  return {
    harness: {
      driver: 'command' as const,
      command: '/bin/sh',
      args: ['-c', `echo run >> "${runs}"; read line < "${gate}"; printf '{"ok":true}' > out.json`],
      readable: [join(dir, 'gate')],
      writable: [join(dir, 'marks')],
      timeoutMs: 600_000,
    },
    /** A spec whose one stage (`work`, or the given one) the agent finishes: out.json, checked by the acceptance command. */
    spec: (taskId: string, stage: object = {}) => ({
      taskId,
      title: 'Finish a stage its Host may stop',
      goal: 'Write out.json once the gate opens.',
      requiredArtifacts: [{ name: 'out.json' }],
      ...(Object.keys(stage).length
        ? { stages: [{ name: 'work', produces: ['out.json'], proposesCompletion: true, ...stage }] }
        : {}),
      acceptance: { command: '/bin/sh', args: ['-c', 'test -f out.json'] },
    }),
    /** Resolves once `n` runs have started, watching the marks' folder. */
    started: (n: number): Promise<void> =>
      new Promise((resolve) => {
        const watcher = watch(join(dir, 'marks'), () => check());
        const check = () => {
          if (count() >= n) {
            watcher.close();
            resolve();
          }
        };
        check();
      }),
    /** Lets the run waiting at the gate go on. */
    open: () => writeFile(gate, 'go\n'),
    /** How many runs started, in all. */
    runs: count,
  };
}
