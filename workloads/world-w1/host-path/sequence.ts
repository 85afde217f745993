import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import type { W1Trajectory } from './faults.js';
import { openW1Host, readOutcome, startTrajectory, W1_RESTS, type HostPathOutcome } from './run.js';
import type { W1HostSurface } from './surface.js';
import { until } from '../compare/wait.js';

const CHILD = fileURLToPath(new URL('./host-child.js', import.meta.url));

/**
 * The Host path on every trajectory of one surface, one at a time (the fault switches are the
 * system's, shared by every caller), on one state root. The in-process trajectories open a Host
 * each on that root; `host-sigkill` runs its first half in a child process that is SIGKILLed with
 * the answer held, and a fresh Host (this process) finishes it from the store.
 */
export async function runHostPath(
  state: string,
  surface: W1HostSurface,
  trajectories: readonly W1Trajectory[],
  say: (line: string) => void,
): Promise<HostPathOutcome[]> {
  const outcomes: HostPathOutcome[] = [];
  for (const trajectory of trajectories) {
    say(`  host path: ${trajectory.name}`);
    outcomes.push(
      trajectory.fault === 'host-sigkill'
        ? await killed(state, surface, trajectory, trajectories)
        : await inProcess(state, surface, trajectory, trajectories),
    );
    // What the trajectory left (an answer still held, another identity) is not the next one's.
    await surface.reset();
  }
  return outcomes;
}

async function inProcess(
  state: string,
  surface: W1HostSurface,
  trajectory: W1Trajectory,
  all: readonly W1Trajectory[],
): Promise<HostPathOutcome> {
  const host = await openW1Host(state, surface, all, surface.timeoutOf(trajectory));
  try {
    const taskId = await startTrajectory(host.supervisor, surface, trajectory);
    if (trajectory.fault === 'provider-restart') {
      await surface.holding(trajectory);
      await surface.restart();
    } else if (trajectory.fault === 'lookup-expired') {
      await surface.holding(trajectory);
      await surface.expireLookups!();
    }
    await host.supervisor.waitFor(taskId, W1_RESTS, ['cancelled']);
    return readOutcome(host.supervisor, surface, trajectory, taskId);
  } finally {
    await host.stop();
  }
}

async function killed(
  state: string,
  surface: W1HostSurface,
  trajectory: W1Trajectory,
  all: readonly W1Trajectory[],
): Promise<HostPathOutcome> {
  const child = execa(
    process.execPath,
    [CHILD, JSON.stringify({ state, surface: surface.args, trajectory: trajectory.name })],
    { reject: false, stdin: 'ignore' },
  );
  let taskId = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const line = /"taskId":"([^"]+)"/.exec(chunk);
    if (line) taskId = line[1]!;
  });
  await surface.holding(trajectory);
  await until('the child to name its Task', async () => taskId !== '');
  child.kill('SIGKILL');
  await child;
  await surface.reset();
  const started = Date.now();
  const host = await openW1Host(state, surface, all, surface.timeoutOf(trajectory));
  try {
    await host.supervisor.waitFor(taskId, W1_RESTS, ['cancelled']);
    return readOutcome(host.supervisor, surface, trajectory, taskId, started);
  } finally {
    await host.stop();
  }
}
