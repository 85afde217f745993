import { watch, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { openHost, type Host } from '../../host/index.js';
import { loadWorkload } from '../../cli/workload.js';
import { demoConfinement } from '../shared/confinement.js';
import { layKit, type Kit } from './kit.js';
import { ATTEMPTS, bestOfThreeSpec, fanOutSpec, type BranchJoinPart, type DrivenTasks } from './specs.js';

/** Resolves once `n` runs of the `hang` agent have marked that they run (the marks folder watched, not polled). */
function hanging(kit: Kit, n: number): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(kit.marks, () => check());
    const check = () => {
      if (readdirSync(kit.marks).filter((f) => f.startsWith('hang-')).length < n) return;
      watcher.close();
      resolve();
    };
    check();
  });
}

async function commit(host: Host, taskId: string, stage: string, harness: string): Promise<void> {
  const sent = await host.supervisor.send(taskId, { type: 'assignment.commit', harness, stage });
  if (!sent.admitted) throw new Error(`${taskId}: the Assignment of ${stage} to ${harness} was refused`);
}

/**
 * Best of three on duration-v1: `investigate` by one agent; `fix` as three parallel Attempts —
 * `wrong` ends first (its verification refused), then `hang` is seen running, and only then does
 * the demo open the gate `right` waits at, so the order of the ends is the demo's, not the
 * scheduler's; the join cancels `hang`. Then `report` in the parent's own workspace.
 */
async function bestOfThree(host: Host, kit: Kit, taskId: string, say: (line: string) => void): Promise<void> {
  const sup = host.supervisor;
  await sup.createTask(bestOfThreeSpec(loadWorkload('duration-v1'), taskId));
  await commit(host, taskId, 'investigate', 'investigate');
  await sup.waitFor(taskId, ['waiting']);
  // The Assignment names one harness; the stage's spec names the three Attempts.
  await commit(host, taskId, 'fix', 'right');
  const generation = sup.getTask(taskId)!.context.generation;
  const [wrong] = ATTEMPTS.map((h, i) => `${taskId}.g${generation}.${i + 1}-${h}`);
  await sup.waitFor(wrong!, ['waiting']);
  say(`best-of-three: ${wrong} ended, its verification refused`);
  await hanging(kit, 1);
  say('best-of-three: the hang Attempt runs; opening the gate of the right one');
  await writeFile(kit.gate, 'go\n');
  await sup.waitFor(taskId, ['waiting']);
  await commit(host, taskId, 'report', 'report');
  await sup.waitFor(taskId, ['completed']);
}

/** The fan-out: `list`, then one fixer child per defect (joined all), then one reviewer child over the joined change. */
async function fanOut(host: Host, taskId: string): Promise<void> {
  const sup = host.supervisor;
  await sup.createTask(fanOutSpec(taskId));
  await commit(host, taskId, 'list', 'list');
  await sup.waitFor(taskId, ['waiting']);
  await commit(host, taskId, 'fix', 'fixer');
  await sup.waitFor(taskId, ['waiting']);
  await commit(host, taskId, 'review', 'reviewer');
  await sup.waitFor(taskId, ['completed']);
}

/** Runs the parts side by side on one Host, as a service would run independent Tasks; returns the parents' ids. */
export async function driveBranchJoin(options: {
  state: string;
  dir: string;
  stamp: string;
  parts: BranchJoinPart[];
  say: (line: string) => void;
}): Promise<DrivenTasks> {
  const { state, dir, stamp, parts, say } = options;
  const kit = layKit(dir, loadWorkload('duration-v1'));
  const tasks: DrivenTasks = {};
  if (parts.includes('best-of-three')) tasks['best-of-three'] = `best-${stamp}`;
  if (parts.includes('fan-out')) tasks['fan-out'] = `fan-${stamp}`;
  const host = await openHost({
    state,
    harnesses: kit.harnesses as never,
    confinement: demoConfinement(say),
    onStep: (taskId, text) => say(`  [${taskId}] ${text}`),
  });
  try {
    await Promise.all([
      tasks['best-of-three'] ? bestOfThree(host, kit, tasks['best-of-three'], say) : undefined,
      tasks['fan-out'] ? fanOut(host, tasks['fan-out']) : undefined,
    ]);
  } finally {
    await host.stop();
  }
  return tasks;
}
