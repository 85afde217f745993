import { z } from 'zod';
import { W1_TRAJECTORIES } from './faults.js';
import { openW1Host, startTrajectory, w1TimeoutOf } from './run.js';

/**
 * The first half of a `host-sigkill` trajectory, in a process of its own: a Host on the state root
 * creates the Task and assigns it, prints `{"taskId"}`, and waits. The provider holds the
 * answer; the parent SIGKILLs this process between the intent and the answer.
 */
const Args = z.strictObject({ state: z.string().min(1), url: z.url(), trajectory: z.string() });

const args = Args.parse(JSON.parse(process.argv[2] ?? '{}'));
const trajectory = W1_TRAJECTORIES.find((t) => t.name === args.trajectory);
if (!trajectory) throw new Error(`no W1 trajectory ${args.trajectory}`);
const host = await openW1Host(args.state, { url: args.url }, W1_TRAJECTORIES, w1TimeoutOf(trajectory));
const taskId = await startTrajectory(host.supervisor, { url: args.url }, trajectory);
process.stdout.write(`${JSON.stringify({ taskId })}\n`);
// Waits to be killed: the held answer never comes while this process lives.
setInterval(() => undefined, 60_000);
