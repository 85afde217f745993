import { z } from 'zod';
import { webappAdapters } from '../webapp/index.js';
import { W1_TRAJECTORIES, W1_WEBAPP_TRAJECTORIES } from './faults.js';
import { providerSurface } from './provider-surface.js';
import { openW1Host, startTrajectory } from './run.js';
import { W1SurfaceArgs } from './surface.js';
import { webappSurface } from './webapp-surface.js';

/**
 * The first half of a `host-sigkill` trajectory, in a process of its own: a Host on the state root
 * (with its own adapters: for the web app, its own Chromium) creates the Task and assigns it,
 * prints `{"taskId"}`, and waits. The system holds the answer; the parent SIGKILLs this process
 * between the intent and the answer.
 */
const Args = z.strictObject({ state: z.string().min(1), surface: W1SurfaceArgs, trajectory: z.string() });

const args = Args.parse(JSON.parse(process.argv[2] ?? '{}'));
const all = args.surface.kind === 'provider' ? W1_TRAJECTORIES : W1_WEBAPP_TRAJECTORIES;
const trajectory = all.find((t) => t.name === args.trajectory);
if (!trajectory) throw new Error(`no W1 trajectory ${args.trajectory}`);
const surface =
  args.surface.kind === 'provider'
    ? providerSurface(args.surface)
    : webappSurface(args.surface, args.surface.identity, webappAdapters(args.surface), args.surface.executablePath);
const host = await openW1Host(args.state, surface, all, surface.timeoutOf(trajectory));
const taskId = await startTrajectory(host.supervisor, surface, trajectory);
process.stdout.write(`${JSON.stringify({ taskId })}\n`);
// Waits to be killed: the held answer never comes while this process lives.
setInterval(() => undefined, 60_000);
