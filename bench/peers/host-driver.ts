// The Host's side of the side-by-side bench (peers.bench.ts), as a user embeds it: `openHost` with
// one Loop v0 harness over the bench's stub model, one Task per agent, its one stage run by the
// loop (each model answer and each tool call durable in the loop's log before the next step; the
// Task's own history holds the Assignment, the run's dispatch and receipt and the outcome). It
// speaks the same driver protocol as the peers' drivers (driver-protocol.ts): run, resume, idle.
//
//   node dist/bench/peers/host-driver.js '<HostDriverConfig as JSON>'
import { mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { z } from 'zod';
import { HarnessConfig } from '../../frontier/index.js';
import { openHost, type Host } from '../../host/index.js';
import { DriverConfig, DriverLine } from './driver-protocol.js';
import { RESULT_FILE, taskPrompt } from './model-stub.js';

export const HostDriverConfig = DriverConfig.extend({
  /** `lmdb`: the embedded store under `dir`; `postgres`: the history on `postgresUrl`'s server. */
  store: z.enum(['lmdb', 'postgres']),
});
export type HostDriverConfig = z.infer<typeof HostDriverConfig>;

/**
 * Agent runs at once on the Host (its driver pool's threads, one run each): a few per core, as a
 * user on a small machine would set it; each thread loads the loop's modules when it starts.
 */
export const HOST_RUNS = 8;

/** How much of the conversation one model call sends (the Loop's `historyChars`): about the last three steps. */
export const HOST_HISTORY_CHARS = 24_000;

function say(line: DriverLine): void {
  process.stdout.write(`${JSON.stringify(DriverLine.parse(line))}\n`);
}

/** One agent Task of `steps` steps: its loop stage, started at creation. */
export function agentSpec(taskId: string, steps: number, idle: boolean) {
  return {
    taskId,
    title: `bench agent ${taskId}`,
    goal: taskPrompt(taskId, steps),
    requiredArtifacts: [{ name: RESULT_FILE, kind: 'json' as const }],
    stages: [{ name: 'agent', instructions: 'Take the steps.', produces: [RESULT_FILE], proposesCompletion: true }],
    // The Host admits the outcome only once a command it runs checks the work (here: the result is there).
    acceptance: { command: 'test', args: ['-s', RESULT_FILE] },
    // Idle: created and held open, waiting for an Assignment that never comes (no run).
    ...(idle ? {} : { start: { stage: 'agent', harness: 'loop' } }),
  };
}

async function open(config: HostDriverConfig): Promise<Host> {
  const state = join(config.dir, 'state');
  mkdirSync(state, { recursive: true });
  return openHost({
    state,
    purpose: `bench peers host pid ${process.pid}`,
    ...(config.store === 'postgres'
      ? {
          store: config.postgresUrl!,
          cluster: { hostId: 'bench-host' },
        }
      : {}),
    workspaces: join(config.dir, 'work'),
    harnesses: {
      loop: HarnessConfig.parse({
        driver: 'loop',
        model: 'bench-stub',
        loop: {
          format: 'chat-completions',
          baseUrl: config.modelUrl,
          maxTurns: config.steps + 2,
          maxTokens: 1_000_000_000,
          historyChars: HOST_HISTORY_CHARS,
        },
        network: 'none',
      }),
    },
    // One Loop v0 run per driver-pool thread: the runs at once are the threads, the other Tasks
    // wait in the Host's run line (TaskView.queued).
    maxThreads: Math.min(config.concurrency, HOST_RUNS),
    concurrency: { runs: Math.min(config.concurrency, HOST_RUNS) },
  });
}

async function main(): Promise<void> {
  const config = HostDriverConfig.parse(JSON.parse(process.argv[2] ?? ''));
  const host = await open(config);
  say({
    t: 'ready',
    pids: { executor: process.pid },
    version: `ordivon ${config.store === 'lmdb' ? 'LMDB' : 'PostgreSQL'}`,
    durability:
      config.store === 'lmdb'
        ? 'every Task event committed and synced (LMDB) before the Host acts on it; every loop step fsynced to its log before the next'
        : 'every Task event committed to PostgreSQL (synchronous_commit=on) before the Host acts on it; every loop step fsynced to its log before the next',
  });
  const stdinClosed = new Promise<void>((resolve) => {
    createInterface({ input: process.stdin }).on('close', resolve);
  });
  if (config.mode === 'idle') {
    for (const taskId of config.tasks) await host.createTask(agentSpec(taskId, config.steps, true));
    say({ t: 'idle', tasks: config.tasks.length });
  } else {
    const known = new Set(host.listTasks().map((t) => t.taskId));
    if (config.mode === 'run')
      await Promise.all(
        config.tasks.filter((id) => !known.has(id)).map((id) => host.createTask(agentSpec(id, config.steps, false))),
      );
    // A Task that stops anywhere but `completed` fails the run (waitFor rejects with its state).
    // A Task that ended before a restart is read first: on PostgreSQL none serves it (an ended
    // Task's lease is not taken again), and waitFor would read it from the shared history anyway.
    const ended = await Promise.all(
      config.tasks.map(async (id) => {
        const stored = host.getTask(id) ?? (await host.readTask(id))?.view;
        if (stored?.state === 'completed') return stored.state;
        return host.waitFor(id, ['completed'], ['waiting', 'blocked', 'cancelled']);
      }),
    );
    say({ t: 'done', ended: ended.length });
  }
  await stdinClosed;
  await host.stop();
  process.exit(0);
}

main().catch((error: unknown) => {
  say({ t: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});
