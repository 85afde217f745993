import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { releaseHeld, setProviderFaults, type ProviderProcess } from '../provider/index.js';
import type { W1Trajectory } from './faults.js';
import { openW1Host, readOutcome, startTrajectory, w1TimeoutOf, W1_RESTS, type HostPathOutcome } from './run.js';
import { held, until } from '../compare/wait.js';

const CHILD = fileURLToPath(new URL('./host-child.js', import.meta.url));

/**
 * The Host path on every trajectory, one at a time (the fault switches are the provider's, shared
 * by every caller), on one state root. The in-process trajectories share one Host; `host-sigkill`
 * runs its first half in a child process that is SIGKILLed with the answer held, and a fresh Host
 * (this process) finishes it from the store.
 */
export async function runHostPath(
  state: string,
  provider: ProviderProcess,
  trajectories: readonly W1Trajectory[],
  say: (line: string) => void,
): Promise<HostPathOutcome[]> {
  const outcomes: HostPathOutcome[] = [];
  for (const trajectory of trajectories) {
    say(`  host path: ${trajectory.name}`);
    outcomes.push(
      trajectory.fault === 'host-sigkill'
        ? await killed(state, provider, trajectory, trajectories)
        : await inProcess(state, provider, trajectory, trajectories),
    );
    // What the trajectory left (an answer still held, another identity) is not the next one's.
    await releaseHeld(provider.url);
    await setProviderFaults(provider.url, { drop: null, delay: null, identity: null });
  }
  return outcomes;
}

async function inProcess(
  state: string,
  provider: ProviderProcess,
  trajectory: W1Trajectory,
  all: readonly W1Trajectory[],
): Promise<HostPathOutcome> {
  const host = await openW1Host(state, provider, all, w1TimeoutOf(trajectory));
  try {
    const taskId = await startTrajectory(host.supervisor, provider, trajectory);
    if (trajectory.fault === 'provider-restart') {
      await held(provider, 1);
      // Killed, not stopped: a stopping server answers what it holds. Its records keep the commit.
      await provider.kill();
      await provider.restart();
    } else if (trajectory.fault === 'lookup-expired') {
      await held(provider, 1);
      // The answer never comes (the caller times out) and the window passes before the lookup.
      await setProviderFaults(provider.url, { advanceClockMs: 2 * 24 * 3600 * 1000 });
    }
    await host.supervisor.waitFor(taskId, W1_RESTS, ['cancelled']);
    return readOutcome(host.supervisor, provider, trajectory, taskId);
  } finally {
    await host.stop();
  }
}

async function killed(
  state: string,
  provider: ProviderProcess,
  trajectory: W1Trajectory,
  all: readonly W1Trajectory[],
): Promise<HostPathOutcome> {
  const child = execa(
    process.execPath,
    [CHILD, JSON.stringify({ state, url: provider.url, trajectory: trajectory.name })],
    {
      reject: false,
      stdin: 'ignore',
    },
  );
  let taskId = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const line = /"taskId":"([^"]+)"/.exec(chunk);
    if (line) taskId = line[1]!;
  });
  await held(provider, 1);
  await until('the child to name its Task', async () => taskId !== '');
  child.kill('SIGKILL');
  await child;
  await releaseHeld(provider.url);
  const started = Date.now();
  const host = await openW1Host(state, provider, all, w1TimeoutOf(trajectory));
  try {
    await host.supervisor.waitFor(taskId, W1_RESTS, ['cancelled']);
    return readOutcome(host.supervisor, provider, trajectory, taskId, started);
  } finally {
    await host.stop();
  }
}
